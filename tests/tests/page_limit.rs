//! A crawl's page limit is reached exactly when batches that link the same
//! new URLs are admitted at the same time (on a real Redis, where each
//! step is a round trip and two batches interleave).

use crawler_tests::TestEnv;
use frontier::FrontierStage;
use pipeline::keys::Keys;
use pipeline::messages::UrlBatch;
use pipeline::worker::Stage;
use pipeline::{CrawlSpec, Link};

fn spec() -> CrawlSpec {
    CrawlSpec {
        allow_domains: vec!["example.com".into()],
        max_depth: 5,
        max_pages: Some(25),
        ..crawler_tests::test_crawl("limited")
    }
}

fn batch(id: &str, urls: &[String]) -> UrlBatch {
    UrlBatch {
        id: id.into(),
        source: Some(format!("http://example.com/{id}")),
        ..UrlBatch::new(
            &spec().reference(),
            1,
            urls.iter().map(|u| Link::new(u.clone())).collect(),
        )
    }
}

#[tokio::test]
async fn overlapping_batches_admit_exactly_the_page_limit() {
    for round in 0..5 {
        let env = TestEnv::in_process(&format!("page_limit_{round}"));
        let store = crawler_tests::shared_store().await;
        let stage = FrontierStage::new(store.clone(), &env.namespace);
        pipeline::crawls::register(&store, &Keys::new(&env.namespace), &spec())
            .await
            .expect("storing the crawl's settings");
        let url = |i: usize| format!("http://example.com/page-{i}");
        // Two pages whose links share ten new URLs; 30 distinct in all,
        // over the limit of 25.
        let a: Vec<String> = (0..20).map(url).collect();
        let b: Vec<String> = (10..30).map(url).collect();
        let (ra, rb) = tokio::join!(stage.handle(batch("a", &a)), stage.handle(batch("b", &b)));
        ra.expect("batch a");
        rb.expect("batch b");
        let counters = pipeline::crawls::read_counters(&store, &Keys::new(&env.namespace))
            .await
            .expect("counters");
        assert_eq!(
            counters.get("seen"),
            25,
            "round {round}: URLs admitted against a limit of 25: {:?}",
            counters.total
        );
        env.cleanup().await;
    }
}
