//! `crawler run`: the four stages in this process over the memory bus and
//! store; exits when the crawl is done, printing every stored document.
//!
//! With `--state DIR` the store is the disk store under DIR
//! ([`pipeline::store::DiskStore`]), the bus keeps its unacked messages in
//! it ([`pipeline::broker::MemoryBus::persistent`]) and the texts go to
//! segment files under DIR: the same command run again after a kill goes
//! on where the last commit stood, and the documents are appended to the
//! output after those a former run wrote (the export cursor and the
//! output's length are kept in the store, [`OUT_KEY`]).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use contentseen::bands::Layout;
use fetcher::http::{Client, FetchSettings};
use pipeline::broker::MemoryBus;
use pipeline::shutdown::Shutdown;
use pipeline::worker::{run as run_worker, Stage, WorkerSettings};
use pipeline::{Broker, Queue, Store};

#[derive(Args)]
pub struct RunArgs {
    /// Allow loopback and private addresses (to crawl a local site).
    #[arg(long, env = "CRAWLER_ALLOW_PRIVATE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub allow_private: bool,
    /// Write the documents here instead of standard output.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Seconds for each whole request.
    #[arg(long, default_value_t = 30)]
    pub timeout_secs: u64,
    /// The whole User-Agent header (default: the crawler's name and version,
    /// and --contact). Its product token is the name robots.txt rules are
    /// matched against.
    #[arg(long, env = "CRAWLER_USER_AGENT")]
    pub user_agent: Option<String>,
    /// Where site owners reach you (a URL or an e-mail address), put in
    /// the default User-Agent.
    #[arg(long, env = "CRAWLER_CONTACT")]
    pub contact: Option<String>,
    /// Also write the crawl as WARC 1.1 files in this directory: request,
    /// response and metadata records per page, a revisit record (of its
    /// original) instead of the response for a near-duplicate.
    #[arg(long, env = "CRAWLER_WARC_DIR")]
    pub warc_dir: Option<std::path::PathBuf>,
    /// A WARC file is closed and the next one started at this many bytes.
    #[arg(long, env = "CRAWLER_WARC_MAX_BYTES", default_value_t = warc::writer::DEFAULT_MAX_BYTES)]
    pub warc_max_bytes: u64,
    /// Keep the crawl's state on disk in this directory (URLs seen, host
    /// queues, fingerprints, documents, texts, messages in flight) instead
    /// of in memory: memory stays bounded, a killed crawl resumes when run
    /// again with the same directory, and `crawler query|stats|export|crawls
    /// --state DIR` read it afterwards.
    #[arg(long, env = "CRAWLER_STATE")]
    pub state: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub source: crate::seed::SeedSource,
    /// Last: the heading of the crawl settings holds for what follows.
    #[command(flatten)]
    pub crawl: crate::seed::CrawlArgs,
}

/// How many fetched pages may wait for the extractor before the fetcher waits
/// ([`pipeline::broker::MemoryBus::hold_back`]): enough that the extractor's workers never
/// wait for a page, few enough that the pages between the two stay a few MB.
const PAGES_AHEAD: usize = 256;

/// The frontier's seen cache with `--state` ([`frontier::FrontierStage::with_seen_cache`]):
/// a quarter of the default, about 10 MB instead of 42 (a heap profile of a 75,000-page
/// crawl of a site whose links reach all its million pages early held 42 MB in it); the
/// URLs it misses are looked up in the store.
const STATE_SEEN_CACHE: usize = 1 << 18;

fn settings<S: Stage>(broker: &Broker, store: &Store) -> WorkerSettings {
    WorkerSettings {
        broker: broker.clone(),
        store: store.clone(),
        namespace: "local".into(),
        concurrency: S::DEFAULT_CONCURRENCY,
        prefetch: 0,
        metrics_addr: None,
    }
}

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let (spec, seeds) = args.source.collect(&args.crawl, args.allow_private).await?;
    let (store, broker, text_dir) = open_state(args.state.as_deref())?;
    let Broker::Memory(bus) = &broker else {
        anyhow::bail!("the local crawl needs the memory bus");
    };
    bus.hold_back(PAGES_AHEAD);
    crate::memory_log::start(match &store {
        Store::Disk(disk) => Some(disk.clone()),
        _ => None,
    });
    let defaults = FetchSettings::default();
    let client = Client::new(FetchSettings {
        allow_private: args.allow_private,
        total_timeout: Duration::from_secs(args.timeout_secs),
        user_agent: fetcher::http::operator_user_agent(
            args.user_agent.clone(),
            args.contact.as_deref(),
        ),
        ..defaults
    })?;
    let warc = match &args.warc_dir {
        Some(dir) => Some(warc::writer::open_shared(dir, args.warc_max_bytes)?),
        None => None,
    };
    let shutdown = Shutdown::new();
    let ns = pipeline::config::RUN_NAMESPACE;
    let texts = match &text_dir {
        Some(dir) => Some(contentseen::texts::open(&store, ns, dir).await?),
        None => None,
    };
    // The keys' scale: for the crawl's page limit, else the default; a
    // resumed --state keeps the one it started with.
    let expected = spec
        .max_pages
        .unwrap_or(pipeline::scale::DEFAULT_EXPECTED_PAGES);
    let scale = pipeline::scale::Scale::settle(&store, pipeline::keys::Keys::new(ns), expected)
        .await?
        .scale();
    let wakeups = Arc::new(frontier::release::Wakeups::default());
    let workers = vec![
        tokio::spawn(run_worker(
            Arc::new(
                frontier::FrontierStage::new(store.clone(), ns)
                    .with_seen_cache(match args.state {
                        Some(_) => STATE_SEEN_CACHE,
                        None => frontier::stage::SEEN_CACHE_MAX,
                    })
                    .with_scale(scale)
                    .with_wakeups(wakeups.clone()),
            ),
            settings::<frontier::FrontierStage>(&broker, &store),
            shutdown.clone(),
        )),
        tokio::spawn(run_worker(
            Arc::new(
                fetcher::FetcherStage::new(store.clone(), ns, client)
                    // Pages cross the bus in memory, or through the
                    // disk store with --state (there compressed).
                    .with_compressed_pages(args.state.is_some())
                    .with_raw_exchange(warc.is_some()),
            ),
            settings::<fetcher::FetcherStage>(&broker, &store),
            shutdown.clone(),
        )),
        tokio::spawn(run_worker(
            Arc::new(extractor::stage::ExtractorStage::new(store.clone(), ns)),
            settings::<extractor::stage::ExtractorStage>(&broker, &store),
            shutdown.clone(),
        )),
        tokio::spawn(run_worker(
            Arc::new(
                contentseen::ContentSeenStage::new(store.clone(), ns, Layout::default())
                    .with_scale(scale)
                    .with_warc(warc.clone())
                    .with_texts(texts, text_dir.as_deref()),
            ),
            settings::<contentseen::ContentSeenStage>(&broker, &store),
            shutdown.clone(),
        )),
    ];
    let releaser = tokio::spawn(frontier::release::run(
        store.clone(),
        broker.clone(),
        ns.to_string(),
        frontier::release::ReleaseSettings::default(),
        wakeups,
        shutdown.clone(),
    ));
    let keys = pipeline::keys::Keys::new(ns);
    let crawl = pipeline::crawls::register(&store, &keys, &spec).await?;
    let session = broker.open().await?;
    session
        .publish(Queue::Frontier, &crate::seed::seed_batches(&crawl, &seeds)?)
        .await?;
    tokio::select! {
        _ = until_idle(bus, &store, &keys) => {}
        _ = tokio::signal::ctrl_c() => eprintln!("interrupted: writing what was stored so far"),
    }
    shutdown.trigger();
    for w in workers {
        let _ = w.await;
    }
    let _ = releaser.await;
    if let (Some(writer), Some(dir)) = (warc, &args.warc_dir) {
        writer.close()?;
        eprintln!("WARC files in {}", dir.display());
    }
    report_dead_letters(bus);
    let n = write_documents(&store, text_dir.as_deref(), args.out.as_deref()).await?;
    eprintln!("crawl done: {n} document(s) stored");
    Ok(())
}

/// The store, bus and text directory of the crawl: in memory, or with
/// `--state DIR` on disk under DIR.
fn open_state(
    state: Option<&std::path::Path>,
) -> anyhow::Result<(Store, Broker, Option<std::path::PathBuf>)> {
    Ok(match state {
        Some(dir) => {
            let disk = pipeline::store::DiskStore::open(&pipeline::config::state_store(dir))?;
            let bus = pipeline::broker::MemoryBus::persistent(disk.clone())?;
            let texts = pipeline::config::state_texts(dir);
            (Store::Disk(disk), Broker::Memory(bus), Some(texts))
        }
        None => (Store::memory(), Broker::memory(), None),
    })
}

/// Writes the stored documents to `out` (standard output without it): all
/// of them from a memory store, or with `--state` (`text_dir` given) those
/// a former run did not write, appended ([`append_new`]). Returns how many
/// were written.
async fn write_documents(
    store: &Store,
    text_dir: Option<&std::path::Path>,
    out: Option<&std::path::Path>,
) -> anyhow::Result<u64> {
    let ns = pipeline::config::RUN_NAMESPACE;
    let docs = crate::export::documents(store, ns, text_dir);
    if text_dir.is_some() {
        let n = append_new(store, &docs, out).await?;
        if let Store::Disk(disk) = store {
            disk.sync()?;
        }
        return Ok(n);
    }
    let mut w: Box<dyn Write> = match out {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let n = crate::export::write_all(&docs, &mut w).await?;
    w.flush()?;
    Ok(n)
}

/// Returns when the crawl is idle: no message anywhere, and no task
/// waiting for its host's turn (or the host queues cannot be read).
async fn until_idle(bus: &MemoryBus, store: &Store, keys: &pipeline::keys::Keys) {
    loop {
        bus.wait_idle().await;
        match frontier::release::waiting(store, keys).await {
            Ok(0) if bus.unfinished() == 0 => break,
            Ok(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            Err(e) => {
                eprintln!("reading the host queues: {e}");
                break;
            }
        }
    }
}

/// The messages the stages could not process, with why.
fn report_dead_letters(bus: &MemoryBus) {
    let dead = bus.dead_letters();
    if !dead.is_empty() {
        eprintln!("{} message(s) could not be processed:", dead.len());
        for d in &dead {
            eprintln!(
                "  {}: {}",
                d.stage,
                d.reason.as_deref().unwrap_or("(no reason recorded)")
            );
        }
    }
}

/// The hash in the disk store where `crawler run --state` keeps how far
/// its output got: `cursor`, the export cursor after the last document
/// written, and `bytes`, the output file's length then.
pub const OUT_KEY: &str = "run:out";

/// Writes the documents stored since the last run's output (the cursor in
/// [`OUT_KEY`]) after it: to `out`, first cut back to the length recorded
/// with that cursor (lines a killed run wrote after it would come again),
/// or to standard output. Records the new cursor and length once the lines
/// are on disk. Returns how many were written.
async fn append_new(
    store: &Store,
    docs: &pipeline::documents::Documents,
    out: Option<&std::path::Path>,
) -> anyhow::Result<u64> {
    use pipeline::store::Op;
    let field = |f: &str| Op::HGet {
        key: OUT_KEY.into(),
        field: f.into(),
    };
    let replies = store.exec(&[field("cursor"), field("bytes")]).await?;
    let cursor: pipeline::documents::Cursor = match replies[0].string()? {
        Some(c) => c
            .parse()
            .map_err(|e| anyhow::anyhow!("the output cursor {c:?} in the state: {e}"))?,
        None => Default::default(),
    };
    let kept = replies[1].int()?.max(0) as u64;
    let filter = crate::export::Filter::default();
    let (n, next, bytes) = match out {
        Some(path) => {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(path)?;
            file.set_len(kept)?;
            std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
            let mut w = std::io::BufWriter::new(file);
            let (n, next) = crate::export::write_from(docs, &mut w, &cursor, &filter).await?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            (n, next, file.metadata()?.len())
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            let (n, next) = crate::export::write_from(docs, &mut w, &cursor, &filter).await?;
            w.flush()?;
            (n, next, 0)
        }
    };
    store
        .exec(&[Op::HSet {
            key: OUT_KEY.into(),
            fields: vec![
                ("cursor".into(), next.to_string().into_bytes()),
                ("bytes".into(), bytes.to_string().into_bytes()),
            ],
        }])
        .await?;
    Ok(n)
}
