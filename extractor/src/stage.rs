//! The extractor stage: a [`Page`](pipeline::messages::Page) in; a
//! [`Document`](pipeline::messages::Document) to contentseen and one
//! [`UrlBatch`](pipeline::messages::UrlBatch) of the page's outlinks (depth + 1) to the frontier.
//! Reads the crawl's settings (its depth limit) from the store, once per
//! crawl ([`pipeline::crawls::Specs`]).

use pipeline::crawls::Specs;
use pipeline::messages::{encode, Document, FetchTask, Page, UrlBatch, VERSION};
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::{keys::Keys, Queue, Store};
use url::Url;

pub struct ExtractorStage {
    keys: Keys,
    specs: Specs,
}

impl ExtractorStage {
    pub fn new(store: Store, namespace: &str) -> Self {
        let keys = Keys::new(namespace);
        ExtractorStage {
            specs: Specs::new(store, keys.clone()),
            keys,
        }
    }
}

impl Stage for ExtractorStage {
    type Input = Page;
    const QUEUE: Queue = Queue::Extract;
    const DEFAULT_CONCURRENCY: usize = 4;

    async fn handle(&self, mut page: Page) -> Result<Outcome, StageError> {
        // The raw HTTP exchange (kept when the crawl writes WARC files)
        // goes on to contentseen as it came.
        let raw = page.raw.take();
        let spec = self.specs.get(&page.crawl).await?;
        let base = Url::parse(&page.final_url)
            .or_else(|_| Url::parse(&page.url))
            .map_err(|e| StageError::Malformed(format!("page URL {:?}: {e}", page.url)))?;
        let body = page
            .html()
            .map_err(|e| StageError::Malformed(format!("page {}: {e}", page.url)))?;
        // Valid UTF-8 (as the fetcher sends every page) is checked by the
        // standard library's fast path; the lossy walk only for the rest.
        let html = match std::str::from_utf8(&body) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(&body),
        };
        // Extraction is CPU work: keep it off the async workers' threads.
        let article = tokio::task::block_in_place(|| crate::extract(&html, &base));

        let mut publish = Vec::with_capacity(2);
        let doc = Document {
            v: VERSION,
            crawl: page.crawl.name.clone(),
            url: page.url.clone(),
            final_url: page.final_url.clone(),
            status: page.status,
            encoding: page.encoding.clone(),
            title: article.title,
            published: article.published,
            author: article.author,
            authors: article.authors,
            text: article.text,
            fetched_at: page.fetched_at.clone(),
            depth: page.depth,
            lang: article.lang,
            site_name: article.site_name,
            images: article.images,
            recrawl: page.recrawl,
            spec: Some(page.crawl.clone()),
            article: article.is_article,
            charset_override: page.charset_override.clone(),
            raw,
        };
        publish.push((Queue::ContentSeen, encode(&doc)?));

        // Counted once per fetch task (a task released twice may be fetched
        // twice; a redelivery carries the same page). Pages without a task
        // id: once per page.
        let id = if page.task.is_empty() {
            let h = xxhash_rust::xxh3::xxh3_128(&body)
                ^ xxhash_rust::xxh3::xxh3_128(page.fetched_at.as_bytes());
            format!("{h:032x}")
        } else {
            page.task.clone()
        };
        let next_depth = page.depth + 1;
        if next_depth <= spec.max_depth && !article.outlinks.is_empty() {
            let batch = UrlBatch {
                // Derived from the page's task, not fresh: a redelivered
                // page sends the same batch, whose counters (out of scope,
                // invalid) the frontier counts once.
                id: FetchTask::derive_id(&["links", &page.url, &id]),
                source: Some(page.final_url.clone()),
                ..UrlBatch::new(&page.crawl, next_depth, article.outlinks)
            };
            publish.push((Queue::Frontier, encode(&batch)?));
        }
        Ok(Outcome {
            store: vec![pipeline::once::once(
                &self.keys,
                pipeline::keys::url_hash(&page.url),
                pipeline::once::EXTRACT_IDS,
                &id,
                None,
                pipeline::crawls::counts(&page.crawl.name, &[("extracted", 1)]),
            )],
            publish,
            after_ack: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::messages::{decode, now_rfc3339, CrawlSpec};

    fn page(task: &str) -> Page {
        let html = "<html><body><article><p>A story of some length, with words enough to be read as one.</p>\
            <a href=\"/next\">next</a> <a href=\"http://elsewhere.example/\">away</a></article></body></html>";
        Page {
            v: VERSION,
            crawl: CrawlSpec::default().reference(),
            url: "http://a.example/".into(),
            final_url: "http://a.example/".into(),
            depth: 0,
            status: 200,
            content_type: Some("text/html".into()),
            encoding: "UTF-8".into(),
            charset_override: None,
            fetched_at: now_rfc3339(),
            recrawl: false,
            html: html.as_bytes().to_vec(),
            task: task.into(),
            zstd: false,
            raw: None,
        }
    }

    fn links(outcome: &Outcome) -> UrlBatch {
        let (_, payload) = outcome
            .publish
            .iter()
            .find(|(q, _)| *q == Queue::Frontier)
            .expect("an outlink batch");
        decode(payload).expect("a batch")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_redelivered_page_sends_the_same_outlink_batch() {
        let store = Store::memory();
        pipeline::crawls::register(&store, &Keys::new("t"), &CrawlSpec::default())
            .await
            .unwrap();
        let stage = ExtractorStage::new(store, "t");
        let first = links(&stage.handle(page("task-1")).await.unwrap());
        let again = links(&stage.handle(page("task-1")).await.unwrap());
        assert_eq!(first.links.len(), 2);
        // The frontier counts a batch once by its id.
        assert_eq!(first.id, again.id);
        // Another task's page is another batch.
        let other = links(&stage.handle(page("task-2")).await.unwrap());
        assert_ne!(first.id, other.id);
    }
}
