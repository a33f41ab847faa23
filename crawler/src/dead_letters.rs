//! `crawler dead-letters`: the messages a stage gave up on, with the reason
//! the worker put on each; `--replay` sends them back to their stage (after
//! a fix, or once a site answers again).

use anyhow::Context;
use clap::Args;
use pipeline::broker::DeadLetter;
use pipeline::messages::{decode, Document, FetchTask, Page, UrlBatch};
use pipeline::Queue;
use serde::Serialize;

#[derive(Args)]
pub struct DeadLettersArgs {
    /// Only this stage's dead letters: frontier, fetch, extract or
    /// contentseen.
    #[arg(long, value_parser = parse_stage)]
    pub stage: Option<Queue>,
    /// Send every dead letter listed back to its stage's queue (each is
    /// removed from the dead-letter queue once the broker confirmed it).
    #[arg(long)]
    pub replay: bool,
}

fn parse_stage(s: &str) -> Result<Queue, String> {
    Queue::ALL
        .iter()
        .copied()
        .find(|q| q.stage() == s)
        .ok_or_else(|| {
            let names: Vec<&str> = Queue::ALL.iter().map(|q| q.stage()).collect();
            format!("unknown stage {s:?}: one of {}", names.join(", "))
        })
}

/// One line of output.
#[derive(Serialize)]
struct Line<'a> {
    stage: &'a str,
    /// The URL the message is about, when it can still be decoded.
    url: Option<String>,
    reason: Option<&'a str>,
    failed_at: Option<&'a str>,
    bytes: usize,
    replayed: bool,
}

/// The URL a message of `stage` is about, if it decodes.
pub fn subject(stage: Queue, payload: &[u8]) -> Option<String> {
    match stage {
        Queue::Frontier => decode::<UrlBatch>(payload).ok().map(|b| {
            b.source
                .or_else(|| b.links.first().map(|l| l.url.clone()))
                .unwrap_or_default()
        }),
        Queue::Fetch => decode::<FetchTask>(payload).ok().map(|t| t.url),
        Queue::Extract => decode::<Page>(payload).ok().map(|p| p.url),
        Queue::ContentSeen => decode::<Document>(payload).ok().map(|d| d.url),
    }
}

fn line(d: &DeadLetter, stage: Queue, replayed: bool) -> String {
    serde_json::to_string(&Line {
        stage: d.stage,
        url: subject(stage, &d.payload),
        reason: d.reason.as_deref(),
        failed_at: d.failed_at.as_deref(),
        bytes: d.bytes,
        replayed,
    })
    .unwrap_or_default()
}

pub async fn run(service: &pipeline::ServiceConfig, args: DeadLettersArgs) -> anyhow::Result<()> {
    let session = service
        .broker()
        .open()
        .await
        .context("connecting to RabbitMQ")?;
    let stages: Vec<Queue> = match args.stage {
        Some(q) => vec![q],
        None => Queue::ALL.to_vec(),
    };
    let mut total = 0;
    for stage in stages {
        let letters = session
            .dead_letters(stage, args.replay)
            .await
            .with_context(|| format!("reading the {} dead letters", stage.stage()))?;
        for d in &letters {
            println!("{}", line(d, stage, args.replay));
        }
        total += letters.len();
    }
    if args.replay {
        eprintln!("replayed {total} dead letter(s)");
    } else {
        eprintln!("{total} dead letter(s)");
    }
    Ok(())
}
