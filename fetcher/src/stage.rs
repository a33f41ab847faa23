//! The fetcher stage: a [`FetchTask`] in; a [`Page`] out when the fetch gave
//! an HTML page; every fetch's outcome recorded under `fetch:<url>`.

use pipeline::keys::Keys;
use pipeline::messages::{encode, new_id, now_rfc3339, FetchTask, Page, UrlBatch, VERSION};
use pipeline::store::Op;
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::{Link, Queue, Store};
use serde::Serialize;
use url::Url;

use crate::charset::{self, Signals};
use crate::http::{is_html, Client, FetchStatus};
use crate::robots::Robots;

pub struct FetcherStage {
    client: Client,
    robots: Robots,
    keys: Keys,
}

/// What `crawler query` shows about the last fetch of a URL.
#[derive(Debug, Serialize)]
pub struct FetchRecord<'a> {
    pub url: &'a str,
    pub outcome: &'static str,
    pub http_status: Option<u16>,
    pub final_url: Option<&'a str>,
    pub reason: Option<String>,
    pub encoding: Option<&'a str>,
    pub fetched_at: String,
}

impl FetcherStage {
    pub fn new(store: Store, namespace: &str, client: Client) -> Self {
        let keys = Keys::new(namespace);
        FetcherStage {
            robots: Robots::new(store, keys.clone(), client.clone()),
            client,
            keys,
        }
    }

    fn record(&self, rec: &FetchRecord) -> Vec<Op> {
        let ok = rec.outcome == FetchStatus::Ok.as_str();
        let redirect = rec.outcome == FetchStatus::Redirect.as_str();
        let mut ops = vec![
            Op::Set {
                key: self.keys.fetch_outcome(rec.url),
                value: serde_json::to_vec(rec).unwrap_or_default(),
                expire_ms: None,
            },
            Op::HIncr {
                key: self.keys.stats(),
                field: format!("fetch_{}", rec.outcome),
                by: 1,
            },
        ];
        if !redirect {
            ops.push(Op::HIncr {
                key: self.keys.stats(),
                field: if ok { "fetched" } else { "failed" }.into(),
                by: 1,
            });
        }
        ops
    }

    fn failed(
        &self,
        url: &str,
        status: FetchStatus,
        http_status: Option<u16>,
        reason: String,
    ) -> Outcome {
        tracing::info!(%url, outcome = status.as_str(), %reason, "fetch failed");
        Outcome {
            publish: Vec::new(),
            after_ack: self.record(&FetchRecord {
                url,
                outcome: status.as_str(),
                http_status,
                final_url: None,
                reason: Some(reason),
                encoding: None,
                fetched_at: now_rfc3339(),
            }),
        }
    }
}

impl FetcherStage {
    /// A 3xx: record it, and send the target to the frontier at the same
    /// depth (one more redirect), unless the chain is too long.
    fn redirect(&self, task: &FetchTask, status: u16, target: &Url) -> Result<Outcome, StageError> {
        let max = self.client.settings().max_redirects as u32;
        if task.redirects >= max {
            return Ok(self.failed(
                &task.url,
                FetchStatus::TooManyRedirects,
                Some(status),
                format!("more than {max} redirects, last to {target}"),
            ));
        }
        let batch = UrlBatch {
            v: VERSION,
            id: new_id(),
            crawl: task.crawl.clone(),
            depth: task.depth,
            seeds: false,
            source: Some(task.url.clone()),
            redirects: task.redirects + 1,
            attempt: 0,
            links: vec![Link::new(target.as_str())],
        };
        Ok(Outcome {
            publish: vec![(Queue::Frontier, encode(&batch)?)],
            after_ack: self.record(&FetchRecord {
                url: &task.url,
                outcome: FetchStatus::Redirect.as_str(),
                http_status: Some(status),
                final_url: Some(target.as_str()),
                reason: None,
                encoding: None,
                fetched_at: now_rfc3339(),
            }),
        })
    }
}

/// The top-level domain of a host, the detector's hint.
fn tld(url: &Url) -> Option<&str> {
    url.host_str()
        .and_then(|h| h.rsplit('.').next())
        .filter(|t| t.bytes().all(|b| b.is_ascii_alphabetic()))
}

impl Stage for FetcherStage {
    type Input = FetchTask;
    const QUEUE: Queue = Queue::Fetch;
    const DEFAULT_CONCURRENCY: usize = 64;

    async fn handle(&self, task: FetchTask) -> Result<Outcome, StageError> {
        let url = match Url::parse(&task.url) {
            Ok(u) => u,
            Err(e) => {
                return Ok(self.failed(&task.url, FetchStatus::InvalidUrl, None, e.to_string()))
            }
        };
        let rules = self.robots.rules_for(&url).await?;
        if !rules.allowed(&url) {
            return Ok(self.failed(
                &task.url,
                FetchStatus::RobotsDisallowed,
                None,
                "disallowed by robots.txt".into(),
            ));
        }
        let resp = match self.client.get(&url).await {
            Ok(r) => r,
            Err(f) => return Ok(self.failed(&task.url, f.status, f.http_status, f.reason)),
        };
        if let Some(target) = &resp.location {
            return self.redirect(&task, resp.status, target);
        }
        if !(200..300).contains(&resp.status) {
            return Ok(self.failed(
                &task.url,
                FetchStatus::HttpError,
                Some(resp.status),
                format!("HTTP {}", resp.status),
            ));
        }
        if !is_html(resp.content_type.as_deref()) {
            return Ok(self.failed(
                &task.url,
                FetchStatus::NotHtml,
                Some(resp.status),
                format!(
                    "content type {}",
                    resp.content_type.as_deref().unwrap_or("(none)")
                ),
            ));
        }
        let signals = Signals {
            header: resp
                .content_type
                .as_deref()
                .and_then(charset::header_charset),
            tld: tld(&resp.final_url).map(str::as_bytes),
            override_encoding: None,
        };
        let (decision, text) = charset::decide_and_decode(&resp.body, &signals);
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
            charset_votes: serde_json::to_string(&decision).ok(),
            fetched_at: fetched_at.clone(),
            html: text.into_bytes(),
        };
        let after_ack = self.record(&FetchRecord {
            url: &task.url,
            outcome: FetchStatus::Ok.as_str(),
            http_status: Some(resp.status),
            final_url: Some(resp.final_url.as_str()),
            reason: None,
            encoding: Some(&decision.encoding),
            fetched_at,
        });
        Ok(Outcome {
            publish: vec![(Queue::Extract, encode(&page)?)],
            after_ack,
        })
    }
}
