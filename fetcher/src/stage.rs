//! The fetcher stage: a [`FetchTask`] in; a [`Page`] out when the fetch gave
//! an HTML page; every fetch's outcome recorded in the URL's record
//! ([`pipeline::once`], with the fetch counters, once per task).
//!
//! The order of a fetch: the URL is checked (length, scheme, IP literal
//! refused by the SSRF guard), robots.txt is obeyed, the request is sent,
//! and the head decides: a redirect goes back to the frontier, an error
//! status or a non-HTML type ends the fetch without reading the body, an
//! HTML body is read within the cap and decoded by the charset vote.
//!
//! Transient failures (timeouts, connection errors, 5xx, 429) go back to
//! the frontier as a [`UrlBatch`] with `attempt + 1` (the frontier retries
//! after a backoff, skipping its seen check) until
//! [`FetchSettings::max_retries`](crate::http::FetchSettings::max_retries);
//! then the failure is final. Permanent ones (other 4xx, too large, not
//! HTML, robots, refused, invalid URL) are final at once; a robots.txt that
//! cannot be read is transient. What the fetch taught about the
//! host goes to its politeness record ([`crate::politeness`]).
//!
//! Before the request, the politeness gate ([`crate::gate`]) books the
//! host's turn (the crawl's delay or the Crawl-delay, whichever is longer);
//! a host whose turn is far off sends the task back to the frontier
//! unrecorded.

use std::time::{Duration, SystemTime};

use pipeline::crawls::Specs;
use pipeline::keys::{url_hash, Keys};
use pipeline::messages::{
    encode, now_rfc3339, CrawlSpec, FetchRecord, FetchTask, Page, RawExchange, UrlBatch, VERSION,
};
use pipeline::once::{once, FETCH_IDS, FETCH_RECORD};
use pipeline::store::Op;
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::{Queue, Store};
use url::Url;

use crate::gate::{release_turn, wait_turn, Turn};
use crate::http::{
    is_html, is_transient_http, Client, FetchFailure, FetchStatus, Head, Overflow, Response,
    WireHead,
};
use crate::politeness::{backoff_after, crawl_delay, now_unix_ms, parse_retry_after, HostFeedback};
use crate::robots::{origin, Robots, RobotsError, Rules};
use charset::overrides::{self, CharsetOverride};
use charset::Signals;

pub struct FetcherStage {
    client: Client,
    robots: Robots,
    keys: Keys,
    /// For the politeness gate.
    store: Store,
    /// The crawls' settings (delay, charset overrides), by the hash tasks
    /// name them by.
    specs: Specs,
    /// Pages go out zstd-compressed ([`Page::compressed`]): worth it through
    /// a broker (its cost grows with message size), not in one process.
    compress_pages: bool,
    /// Keep each page's raw HTTP exchange ([`Page::raw`]) for the WARC
    /// records contentseen writes; off unless the crawl writes WARC files.
    keep_raw: bool,
}

/// The stats counter of retries sent back to the frontier (not final
/// outcomes, so not in `fetched` or `failed`).
pub const RETRIED_COUNTER: &str = "fetch_retried";

impl FetcherStage {
    pub fn new(store: Store, namespace: &str, client: Client) -> Self {
        let keys = Keys::new(namespace);
        FetcherStage {
            robots: Robots::new(store.clone(), keys.clone(), client.clone()),
            client,
            specs: Specs::new(store.clone(), keys.clone()),
            keys,
            store,
            compress_pages: true,
            keep_raw: false,
        }
    }

    /// This stage, keeping each page's raw HTTP exchange or not (on when
    /// the crawl writes WARC files: `CRAWLER_WARC_DIR`, `--warc-dir`).
    pub fn with_raw_exchange(mut self, keep: bool) -> Self {
        self.keep_raw = keep;
        self
    }

    /// This stage, sending pages compressed or not (`crawler run`, whose
    /// queues are in memory, does not).
    pub fn with_compressed_pages(mut self, compress: bool) -> Self {
        self.compress_pages = compress;
        self
    }

    /// The record of a fetch and its counters, counted once per task
    /// ([`once`], run before the outcome is published): `fetch_<outcome>`
    /// and `fetched` or `failed` for a final outcome (a redirect is
    /// neither), [`RETRIED_COUNTER`] for a failure that will be retried.
    pub fn record(&self, task: &FetchTask, rec: &FetchRecord) -> Op {
        let ok = rec.outcome == FetchStatus::Ok.as_str();
        let redirect = rec.outcome == FetchStatus::Redirect.as_str();
        let outcome = format!("fetch_{}", rec.outcome);
        let fields: Vec<(&str, i64)> = if rec.will_retry {
            vec![(RETRIED_COUNTER, 1)]
        } else if redirect {
            vec![(&outcome, 1)]
        } else {
            vec![(&outcome, 1), (if ok { "fetched" } else { "failed" }, 1)]
        };
        let mut counts = pipeline::crawls::counts(&task.crawl.name, &fields);
        // The bytes fetched: for the namespace's metrics only.
        if let Some(bytes) = rec.bytes {
            counts.push((
                pipeline::metrics::FETCHED_BYTES.to_string(),
                i64::try_from(bytes).unwrap_or(i64::MAX),
            ));
        }
        once(
            &self.keys,
            url_hash(&task.url),
            FETCH_IDS,
            &task.identity(),
            Some((FETCH_RECORD, rec.compact())),
            counts,
        )
    }

    /// A fetch that gave no page. `origin` is set when a request was sent
    /// (the host's record learns from it); `backoff` when the host asked to
    /// be left alone (429/503).
    fn failed(
        &self,
        task: &FetchTask,
        origin: Option<&str>,
        failure: FetchFailure,
        backoff: Option<Duration>,
    ) -> Result<Outcome, StageError> {
        let transient = match failure.status {
            FetchStatus::Timeout | FetchStatus::ConnectionError => true,
            FetchStatus::HttpError => failure.http_status.is_some_and(is_transient_http),
            _ => false,
        };
        self.failed_as(task, origin, failure, backoff, transient)
    }

    /// [`Self::failed`], with the failure's transience decided by the caller.
    fn failed_as(
        &self,
        task: &FetchTask,
        origin: Option<&str>,
        failure: FetchFailure,
        backoff: Option<Duration>,
        transient: bool,
    ) -> Result<Outcome, StageError> {
        let will_retry = transient && task.attempt < self.client.settings().max_retries;
        let mut after_ack = Vec::new();
        if let Some(origin) = origin {
            let host = HostFeedback::new(&self.keys, origin);
            if transient {
                after_ack.push(host.failed());
            } else if failure.http_status.is_some() {
                after_ack.push(host.answered());
            }
            if let Some(wait) = backoff {
                pipeline::metrics::crawl_series().host_backed_off(origin);
                after_ack.push(host.back_off(now_unix_ms(), wait));
            }
        }
        let mut publish = Vec::new();
        if will_retry {
            let batch = UrlBatch {
                attempt: task.attempt + 1,
                ..UrlBatch::follow_up(task, "retry", &task.url)
            };
            publish.push((Queue::Frontier, encode(&batch)?));
        }
        tracing::info!(
            url = %task.url,
            outcome = failure.status.as_str(),
            reason = %failure.reason,
            attempt = task.attempt,
            will_retry,
            "fetch failed"
        );
        let store = vec![self.record(
            task,
            &FetchRecord {
                url: task.url.clone(),
                outcome: failure.status.as_str().to_string(),
                http_status: failure.http_status,
                final_url: None,
                reason: Some(failure.reason),
                encoding: None,
                fetched_at: now_rfc3339(),
                attempt: task.attempt,
                will_retry,
                bytes: None,
            },
        )];
        Ok(Outcome {
            store,
            publish,
            after_ack,
        })
    }

    /// The host's turn is far off (a backoff): the task goes back to the
    /// frontier, which schedules it when the host is due.
    fn not_yet(&self, task: &FetchTask, wait: Duration) -> Result<Outcome, StageError> {
        tracing::debug!(url = %task.url, wait_ms = wait.as_millis() as u64, "host not due: back to the frontier");
        let batch = UrlBatch {
            // So the frontier does not drop it as already seen.
            rescheduled: true,
            // The same task, later: counted once however often it was
            // delivered.
            task: Some(task.identity()),
            ..UrlBatch::follow_up(task, "later", &task.url)
        };
        Ok(Outcome {
            publish: vec![(Queue::Frontier, encode(&batch)?)],
            ..Outcome::default()
        })
    }

    /// A 3xx: record it, and send the target to the frontier at the same
    /// depth (one more redirect), unless the chain is too long.
    fn redirect(
        &self,
        task: &FetchTask,
        origin: &str,
        status: u16,
        target: &Url,
    ) -> Result<Outcome, StageError> {
        let max = self.client.settings().max_redirects as u32;
        if task.redirects >= max {
            let failure = FetchFailure {
                http_status: Some(status),
                ..FetchFailure::new(
                    FetchStatus::TooManyRedirects,
                    format!("more than {max} redirects, last to {target}"),
                )
            };
            return self.failed(task, Some(origin), failure, None);
        }
        let batch = UrlBatch {
            redirects: task.redirects + 1,
            attempt: 0,
            ..UrlBatch::follow_up(task, "redirect", target.as_str())
        };
        let record = self.record(
            task,
            &FetchRecord {
                url: task.url.clone(),
                outcome: FetchStatus::Redirect.as_str().to_string(),
                http_status: Some(status),
                final_url: Some(target.to_string()),
                reason: None,
                encoding: None,
                fetched_at: now_rfc3339(),
                attempt: task.attempt,
                will_retry: false,
                bytes: None,
            },
        );
        Ok(Outcome {
            store: vec![record],
            publish: vec![(Queue::Frontier, encode(&batch)?)],
            after_ack: vec![HostFeedback::new(&self.keys, origin).answered()],
        })
    }
}

/// The crawl's per-site charset override for the page at `url`, if one
/// covers its host. The rules were checked by `crawler seed`/`run`; one that
/// no longer parses (a message from another version) is skipped, with a
/// warning, rather than failing the page.
pub fn charset_override(crawl: &CrawlSpec, url: &Url) -> Option<CharsetOverride> {
    if crawl.charset_overrides.is_empty() {
        return None;
    }
    let rules: Vec<CharsetOverride> = crawl
        .charset_overrides
        .iter()
        .filter_map(|rule| match CharsetOverride::parse(rule) {
            Ok(rule) => Some(rule),
            Err(e) => {
                tracing::warn!(crawl = %crawl.name, "{e}; skipped");
                None
            }
        })
        .collect();
    overrides::matching(&rules, url.host_str()?).cloned()
}

impl Stage for FetcherStage {
    type Input = FetchTask;
    const QUEUE: Queue = Queue::Fetch;
    const DEFAULT_CONCURRENCY: usize = 64;

    async fn handle(&self, task: FetchTask) -> Result<Outcome, StageError> {
        let mut turn = None;
        let result = self.fetch(task, &mut turn).await;
        // The host's next request may start one delay after this one ended.
        match (result, turn) {
            (Ok(mut outcome), Some((origin, delay))) => {
                outcome
                    .after_ack
                    .push(release_turn(&self.keys, &origin, delay));
                Ok(outcome)
            }
            (result, _) => result,
        }
    }
}

impl FetcherStage {
    /// The whole fetch of a task; `turn` is set once the host's turn is
    /// taken (to its origin and delay), so the caller hands it back.
    async fn fetch(
        &self,
        task: FetchTask,
        turn: &mut Option<(String, Duration)>,
    ) -> Result<Outcome, StageError> {
        let url = match self.client.check(&task.url) {
            Ok(u) => u,
            Err(f) => return self.failed(&task, None, f, None),
        };
        let spec = self.specs.get(&task.crawl).await?;
        let origin = origin(&url);
        let rules = match self.robots.rules_for(&url).await {
            Ok(rules) => rules,
            Err(RobotsError::Store(e)) => return Err(e.into()),
            Err(RobotsError::Refused(reason)) => {
                let failure = FetchFailure::new(FetchStatus::Refused, reason);
                return self.failed(&task, None, failure, None);
            }
        };
        if let Rules::Unreachable { status, reason } = &*rules {
            // robots.txt could not be read: not now, maybe later. The robots
            // module already told the host record when it tried.
            let failure = FetchFailure::new(*status, reason.clone());
            return self.failed_as(&task, None, failure, None, true);
        }
        if !rules.allowed(&url) {
            let failure =
                FetchFailure::new(FetchStatus::RobotsDisallowed, "disallowed by robots.txt");
            return self.failed(&task, None, failure, None);
        }
        // Politeness: this host's turn, booked for every fetcher of the cluster.
        let delay = Duration::from_millis(spec.delay_ms)
            .max(rules.crawl_delay().map(crawl_delay).unwrap_or_default());
        let lease = delay + self.client.settings().total_timeout;
        if let Turn::Later(wait) = wait_turn(&self.store, &self.keys, &origin, delay, lease).await?
        {
            return self.not_yet(&task, wait);
        }
        if !delay.is_zero() {
            *turn = Some((origin.clone(), delay));
        }
        let head = match self.client.send(&url).await {
            Ok(h) => h,
            Err(f) => return self.failed(&task, Some(&origin), f, None),
        };
        if let Some(target) = &head.parts.location {
            return self.redirect(&task, &origin, head.parts.status, target);
        }
        self.answered(&task, &spec, &origin, &url, head).await
    }

    /// A response that is no redirect: a failure unless it is a 2xx HTML
    /// page, whose body is then read and decoded ([`FetcherStage::page`]).
    async fn answered(
        &self,
        task: &FetchTask,
        spec: &CrawlSpec,
        origin: &str,
        url: &Url,
        head: Head,
    ) -> Result<Outcome, StageError> {
        let status = head.parts.status;
        if !(200..300).contains(&status) {
            // 429 and 503 ask us to come back later: when Retry-After says,
            // or after a pause that grows with the attempts.
            let backoff = matches!(status, 429 | 503).then(|| {
                head.parts
                    .retry_after
                    .as_deref()
                    .and_then(|v| parse_retry_after(v, SystemTime::now()))
                    .unwrap_or_else(|| backoff_after(task.attempt))
            });
            let failure = FetchFailure {
                http_status: Some(status),
                ..FetchFailure::new(FetchStatus::HttpError, format!("HTTP {status}"))
            };
            return self.failed(task, Some(origin), failure, backoff);
        }
        if !is_html(head.parts.content_type.as_deref()) {
            // Not decoded, not even downloaded: the body is dropped unread.
            let failure = FetchFailure {
                http_status: Some(status),
                ..FetchFailure::new(
                    FetchStatus::NotHtml,
                    format!(
                        "content type {}",
                        head.parts.content_type.as_deref().unwrap_or("(none)")
                    ),
                )
            };
            return self.failed(task, Some(origin), failure, None);
        }
        let wire = self.keep_raw.then(|| head.wire_head());
        let cap = self.client.settings().max_body_bytes;
        let resp = match head.read(cap, Overflow::Fail).await {
            Ok(r) => r,
            Err(f) => return self.failed(task, Some(origin), f, None),
        };
        self.page(task, spec, origin, url, resp, wire)
    }

    /// A downloaded page: its charset decided and its text decoded, the
    /// page for the extractor, and the fetch record.
    fn page(
        &self,
        task: &FetchTask,
        spec: &CrawlSpec,
        origin: &str,
        url: &Url,
        resp: Response,
        wire: Option<WireHead>,
    ) -> Result<Outcome, StageError> {
        let override_rule = charset_override(spec, &resp.final_url);
        let signals = Signals {
            header: resp
                .content_type
                .as_deref()
                .and_then(charset::header_charset),
            tld: resp
                .final_url
                .host_str()
                .and_then(charset::tld)
                .map(str::as_bytes),
            override_encoding: override_rule.as_ref().map(|rule| rule.encoding),
        };
        let (decision, text) = charset::decide_and_decode(&resp.body, &signals);
        let body_bytes = resp.body.len();
        let fetched_at = now_rfc3339();
        let page = Page {
            v: VERSION,
            crawl: task.crawl.clone(),
            url: task.url.clone(),
            final_url: resp.final_url.to_string(),
            depth: task.depth,
            status: resp.status,
            content_type: resp.content_type.clone(),
            encoding: decision.encoding.clone(),
            // No stage reads the votes: the encoding alone travels (the
            // `crawler charset` tool shows the votes of a saved page).
            charset_override: override_rule.map(|rule| rule.to_string()),
            fetched_at: fetched_at.clone(),
            recrawl: task.recrawl,
            html: text.into_bytes(),
            task: task.identity(),
            zstd: false,
            raw: wire.map(|wire| RawExchange {
                request: self.client.request_head(url, wire.version),
                response: wire.with_length(resp.body.len()),
                body: resp.body,
                zstd: false,
            }),
        };
        let record = self.record(
            task,
            &FetchRecord {
                url: task.url.clone(),
                outcome: FetchStatus::Ok.as_str().to_string(),
                http_status: Some(resp.status),
                final_url: (resp.final_url.as_str() != task.url)
                    .then(|| resp.final_url.to_string()),
                reason: None,
                encoding: Some(decision.encoding.clone()),
                fetched_at,
                attempt: task.attempt,
                will_retry: false,
                bytes: Some(body_bytes as u64),
            },
        );
        Ok(Outcome {
            store: vec![record],
            publish: vec![(
                Queue::Extract,
                encode(&if self.compress_pages {
                    page.compressed()
                } else {
                    page
                })?,
            )],
            after_ack: vec![HostFeedback::new(&self.keys, origin).answered()],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crawls_override_rule_for_the_pages_host() {
        let spec = CrawlSpec {
            charset_overrides: vec![
                "*.example.com=windows-1251".into(),
                "news.example.com=GBK".into(),
                "not a rule".into(),
            ],
            ..CrawlSpec::default()
        };
        let rule = |url: &str| {
            let url = Url::parse(url).expect("a URL");
            charset_override(&spec, &url).map(|rule| rule.to_string())
        };
        for (url, want) in [
            ("http://news.example.com/a", Some("news.example.com=GBK")),
            (
                "http://www.example.com/a",
                Some("*.example.com=windows-1251"),
            ),
            ("http://example.org/a", None),
        ] {
            assert_eq!(rule(url).as_deref(), want, "{url}");
        }
        assert_eq!(
            charset_override(
                &CrawlSpec::default(),
                &Url::parse("http://example.com/").expect("a URL")
            ),
            None
        );
    }
}
