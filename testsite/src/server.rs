//! Serving a [`Site`] over HTTP/1.1 with keep-alive, and the request log.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::bodies::{self, Drip, ResponseBody};
use crate::site::{HostileKind, Site, StoredBody};

/// Requests kept in the log; later ones are counted but not stored, so a
/// long benchmark cannot grow the server without bound.
pub const MAX_LOGGED_REQUESTS: usize = 1_000_000;

/// One request the server received.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// When the request head arrived (monotonic, for interval checks).
    #[serde(skip)]
    pub at: Instant,
    /// The same moment as milliseconds since the Unix epoch.
    pub unix_millis: u64,
    /// Milliseconds since the server started.
    pub elapsed_millis: u64,
    pub method: String,
    /// The Host header, e.g. "127.0.0.1:41234" or "localhost:41234".
    pub host: Option<String>,
    /// Path and query as requested.
    pub path: String,
    pub user_agent: Option<String>,
    /// The status the server answered (or will answer, for slow responses).
    pub status: u16,
}

/// The shared request log.
#[derive(Debug)]
struct RequestLog {
    started: Instant,
    records: Mutex<Vec<RequestRecord>>,
}

impl RequestLog {
    fn records(&self) -> MutexGuard<'_, Vec<RequestRecord>> {
        // A panic while pushing cannot leave the Vec inconsistent.
        self.records
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn record(&self, request: &Request<Incoming>, status: u16) {
        let header = |name: hyper::header::HeaderName| {
            request
                .headers()
                .get(name)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        };
        let at = Instant::now();
        let record = RequestRecord {
            at,
            unix_millis: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.as_millis() as u64),
            elapsed_millis: at.duration_since(self.started).as_millis() as u64,
            method: request.method().to_string(),
            host: header(hyper::header::HOST),
            path: request.uri().path_and_query().map_or_else(
                || request.uri().path().to_string(),
                |target| target.as_str().to_string(),
            ),
            user_agent: header(hyper::header::USER_AGENT),
            status,
        };
        let mut records = self.records();
        if records.len() < MAX_LOGGED_REQUESTS {
            records.push(record);
        }
    }
}

/// A running server. Dropping it (or calling `shutdown`) stops accepting and
/// closes every open connection, including hung hostile responses.
#[derive(Debug)]
pub struct ServerHandle {
    local_addr: SocketAddr,
    site: Arc<Site>,
    log: Arc<RequestLog>,
    /// Dropping the sender tells the accept loop and every connection to stop.
    shutdown: Option<watch::Sender<()>>,
    accept_loop: JoinHandle<()>,
}

impl ServerHandle {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        match self.local_addr {
            SocketAddr::V4(address) => format!("http://{}:{}", address.ip(), address.port()),
            SocketAddr::V6(address) => format!("http://[{}]:{}", address.ip(), address.port()),
        }
    }

    /// The base URL plus `path` ("/article/3").
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url())
    }

    pub fn port(&self) -> u16 {
        self.local_addr.port()
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The site as served: links and headers carry the real port.
    pub fn site(&self) -> &Site {
        &self.site
    }

    /// A copy of the request log so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.log.records().clone()
    }

    /// How many requests asked for exactly `path_and_query`.
    pub fn request_count(&self, path_and_query: &str) -> usize {
        self.log
            .records()
            .iter()
            .filter(|record| record.path == path_and_query)
            .count()
    }

    /// Waits until the log holds at least `count` requests; false on timeout.
    pub async fn wait_for_requests(&self, count: usize, timeout: std::time::Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while self.log.records().len() < count {
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        true
    }

    /// Empties the request log (e.g. between phases of a test).
    pub fn clear_requests(&self) {
        self.log.records().clear();
    }

    /// Stops the server; open connections are closed.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown.take();
        self.accept_loop.abort();
    }
}

/// Binds `addr` (use `127.0.0.1:0` for an ephemeral port), writes the bound
/// port into the site's links, and serves it until the handle is dropped.
pub async fn serve(mut site: Site, addr: SocketAddr) -> std::io::Result<ServerHandle> {
    let listener = TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    site.bind_port(local_addr.port());
    let site = Arc::new(site);
    let log = Arc::new(RequestLog {
        started: Instant::now(),
        records: Mutex::new(Vec::new()),
    });
    let (shutdown, stopped) = watch::channel(());
    let (served, logged) = (Arc::clone(&site), Arc::clone(&log));
    let accept_loop = tokio::spawn(accept_until(listener, stopped, move |request| {
        let (site, log) = (Arc::clone(&served), Arc::clone(&logged));
        async move { respond(&site, &log, request).await }
    }));
    Ok(ServerHandle {
        local_addr,
        site,
        log,
        shutdown: Some(shutdown),
        accept_loop,
    })
}

/// Accepts connections on `listener` until `stopped` changes, and serves
/// each (HTTP/1.1, keep-alive) with `respond` until then: the accept loop
/// of the test site and of the `evaluation` crate's bench site.
pub async fn accept_until<R, Fut, B>(
    listener: TcpListener,
    mut stopped: watch::Receiver<()>,
    respond: R,
) where
    R: Fn(Request<Incoming>) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of file descriptors and the like: back off briefly.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = stopped.changed() => return,
        };
        let _ = stream.set_nodelay(true);
        let respond = respond.clone();
        let mut connection_stopped = stopped.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let response = respond(request);
                async move { Ok::<_, Infallible>(response.await) }
            });
            let connection = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                _ = connection_stopped.changed() => {}
            }
        });
    }
}

async fn respond(
    site: &Site,
    log: &RequestLog,
    request: Request<Incoming>,
) -> Response<ResponseBody> {
    let delay = site.config().response_delay;
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |target| target.as_str());
    let Some((page, stored)) = site.lookup(target) else {
        log.record(&request, 404);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        return plain_response(
            404,
            "text/html; charset=utf-8",
            "<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>\n",
        );
    };
    log.record(&request, page.status);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let hostile = &site.config().hostile;
    let body = match &stored.body {
        StoredBody::Bytes(bytes) => ResponseBody::full(bytes.clone()),
        StoredBody::Hostile(kind) => match kind {
            HostileKind::Drip => ResponseBody::Drip(Drip::new(hostile.drip_interval)),
            HostileKind::SlowHeaders => {
                tokio::time::sleep(hostile.slow_headers_delay).await;
                ResponseBody::empty()
            }
            HostileKind::GzipBomb => ResponseBody::Repeated(site.gzip_bomb().body()),
            HostileKind::Huge => ResponseBody::Repeated(bodies::huge_html(hostile.huge_bytes)),
            HostileKind::Endless => ResponseBody::Repeated(bodies::endless_html()),
        },
    };
    let mut builder = Response::builder().status(page.status);
    for (name, value) in &stored.headers {
        builder = builder.header(*name, value.as_str());
    }
    builder
        .body(body)
        .unwrap_or_else(|_| plain_response(500, "text/plain", "invalid stored response\n"))
}

fn plain_response(status: u16, content_type: &str, body: &'static str) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::full(body));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::{HostileSettings, PageKind, SiteConfig};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A client that never uses a proxy, never follows redirects and never
    /// decompresses, so tests see exactly what the server sent.
    fn client() -> reqwest::Client {
        reqwest::Client::builder()
            .no_proxy()
            .no_gzip()
            .no_brotli()
            .no_deflate()
            .no_zstd()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap()
    }

    /// `path` of the site, by the tests' client (no redirects followed).
    async fn get(server: &ServerHandle, path: &str) -> reqwest::Response {
        client().get(server.url(path)).send().await.unwrap()
    }

    fn small_hostile_config() -> SiteConfig {
        SiteConfig {
            articles: 30,
            zh_articles: 3,
            hostile: HostileSettings {
                drip_interval: Duration::from_millis(50),
                slow_headers_delay: Duration::from_secs(3600),
                huge_bytes: 3 * 1024 * 1024 + 17,
                bomb_inflated_bytes: 8 * 1024 * 1024,
            },
            ..SiteConfig::default()
        }
    }

    async fn start(config: &SiteConfig) -> ServerHandle {
        serve(Site::generate(config), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap()
    }

    /// A server of the default site and a raw TCP connection to it.
    async fn start_and_connect() -> (ServerHandle, tokio::net::TcpStream) {
        let server = start(&SiteConfig::default()).await;
        let stream = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .unwrap();
        (server, stream)
    }

    #[tokio::test]
    async fn serves_articles_and_logs_every_request() {
        let server = start(&SiteConfig::default()).await;
        assert_eq!(
            server.base_url(),
            format!("http://127.0.0.1:{}", server.port())
        );
        let response = get(&server, "/article/3").await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"],
            "text/html; charset=utf-8"
        );
        let html = response.text().await.unwrap();
        let page = server.site().page("/article/3").unwrap();
        assert!(html.contains(page.title.as_deref().unwrap()));
        assert_eq!(
            html.as_bytes(),
            server.site().response_bytes("/article/3").unwrap()
        );

        let missing = get(&server, "/nowhere").await;
        assert_eq!(missing.status(), 404);
        let with_query = get(&server, "/article/3?ref=related").await;
        assert_eq!(with_query.text().await.unwrap(), html);

        let log = server.requests();
        let paths: Vec<(&str, u16)> = log
            .iter()
            .map(|record| (record.path.as_str(), record.status))
            .collect();
        assert_eq!(
            paths,
            vec![
                ("/article/3", 200),
                ("/nowhere", 404),
                ("/article/3?ref=related", 200)
            ]
        );
        assert_eq!(log[0].method, "GET");
        assert_eq!(
            log[0].host.as_deref(),
            Some(format!("127.0.0.1:{}", server.port()).as_str())
        );
        assert!(log[0].at <= log[1].at && log[1].elapsed_millis <= log[2].elapsed_millis);
        assert_eq!(server.request_count("/article/3"), 1);
    }

    #[tokio::test]
    async fn gbk_pages_decode_to_the_expected_text() {
        let server = start(&SiteConfig::default()).await;
        let response = get(&server, "/zh/2").await;
        assert_eq!(response.headers()["content-type"], "text/html; charset=gbk");
        let bytes = response.bytes().await.unwrap();
        let (text, _, had_errors) = encoding_rs::GBK.decode(&bytes);
        assert!(!had_errors);
        assert!(text.contains("<meta charset=\"gbk\">"));
        let page = server.site().page("/zh/2").unwrap();
        for paragraph in page.body_text.as_deref().unwrap().split('\n') {
            assert!(text.contains(paragraph));
        }
        let lie = get(&server, "/lie/gbk-declared-utf8").await;
        assert_eq!(lie.headers()["content-type"], "text/html; charset=utf-8");
        assert!(std::str::from_utf8(&lie.bytes().await.unwrap()).is_err());
    }

    #[tokio::test]
    async fn redirects_errors_robots_and_other_resources() {
        let server = start(&SiteConfig::default()).await;
        let redirect = get(&server, "/r/0").await;
        assert_eq!(redirect.status(), 301);
        let location = redirect.headers()["location"].to_str().unwrap().to_string();
        assert_eq!(
            Some(location.as_str()),
            server.site().page("/r/0").unwrap().redirect_to.as_deref()
        );
        assert!(location.starts_with("/article/"));

        let absolute = get(&server, "/r/absolute").await;
        assert_eq!(
            absolute.headers()["location"],
            format!("http://127.0.0.1:{}/about", server.port()).as_str()
        );
        let looping = get(&server, "/loop/a").await;
        assert_eq!(looping.headers()["location"], "/loop/b");

        let unavailable = get(&server, "/error/503").await;
        assert_eq!(unavailable.status(), 503);
        assert_eq!(unavailable.headers()["retry-after"], "2");
        let too_many = get(&server, "/error/429").await;
        assert_eq!(too_many.status(), 429);

        let robots = get(&server, "/robots.txt").await;
        assert_eq!(robots.text().await.unwrap(), crate::DEFAULT_ROBOTS_TXT);
        let pdf = get(&server, "/file.pdf").await;
        assert_eq!(pdf.headers()["content-type"], "application/pdf");

        let spec = server.site().pages_of_kind(PageKind::Copy).next().unwrap();
        {
            let copy = get(&server, &spec.path).await.bytes().await.unwrap();
            let original = get(&server, spec.duplicate_of.as_deref().unwrap())
                .await
                .bytes()
                .await
                .unwrap();
            assert_eq!(copy, original);
        }
    }

    #[tokio::test]
    async fn localhost_links_reach_this_server_under_another_host() {
        let (server, mut stream) = start_and_connect().await;
        let request = format!(
            "GET /about HTTP/1.1\r\nHost: localhost:{}\r\nConnection: close\r\n\r\n",
            server.port()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        assert!(response.starts_with(b"HTTP/1.1 200"));
        let log = server.requests();
        assert_eq!(
            log[0].host.as_deref(),
            Some(format!("localhost:{}", server.port()).as_str())
        );
    }

    #[tokio::test]
    async fn one_connection_serves_many_requests() {
        let (server, mut stream) = start_and_connect().await;
        for path in ["/robots.txt", "/about", "/robots.txt"] {
            let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            stream.write_all(request.as_bytes()).await.unwrap();
            let expected_body = server.site().response_bytes(path).unwrap().len();
            let mut response = Vec::new();
            let mut buffer = [0u8; 4096];
            // Read until the head and the whole body have arrived.
            loop {
                let read = stream.read(&mut buffer).await.unwrap();
                assert!(read > 0, "connection closed after {path}");
                response.extend_from_slice(&buffer[..read]);
                if let Some(head_end) = response.windows(4).position(|window| window == b"\r\n\r\n")
                {
                    if response.len() >= head_end + 4 + expected_body {
                        break;
                    }
                }
            }
            assert!(response.starts_with(b"HTTP/1.1 200"));
        }
        assert_eq!(server.requests().len(), 3);
    }

    #[tokio::test]
    async fn many_concurrent_connections_are_served() {
        let server = start(&SiteConfig::default()).await;
        let mut tasks = Vec::new();
        for number in 0..200 {
            let url = server.url(&format!("/article/{}", number % 50));
            // A client each: one connection each, all open at once.
            tasks.push(tokio::spawn(async move {
                client()
                    .get(url)
                    .send()
                    .await
                    .map(|response| response.status())
            }));
        }
        for task in tasks {
            assert_eq!(task.await.unwrap().unwrap(), 200);
        }
        assert!(server.wait_for_requests(200, Duration::from_secs(1)).await);
        assert_eq!(server.requests().len(), 200);
    }

    #[tokio::test]
    async fn hostile_endpoints_misbehave_within_bounds() {
        let server = start(&small_hostile_config()).await;

        let mut drip = get(&server, "/hostile/drip").await;
        assert_eq!(drip.status(), 200);
        let started = Instant::now();
        let mut received = 0;
        while received < 4 {
            received += drip.chunk().await.unwrap().unwrap().len();
        }
        assert!(started.elapsed() >= Duration::from_millis(150));

        let slow = tokio::time::timeout(
            Duration::from_millis(300),
            client().get(server.url("/hostile/slow-headers")).send(),
        )
        .await;
        assert!(slow.is_err(), "slow-headers answered");

        let huge = get(&server, "/hostile/huge").await;
        assert_eq!(huge.content_length(), Some(3 * 1024 * 1024 + 17));
        assert_eq!(huge.bytes().await.unwrap().len(), 3 * 1024 * 1024 + 17);

        let mut endless = get(&server, "/hostile/endless").await;
        assert_eq!(endless.content_length(), None);
        let mut received = 0;
        while received < 4 * 1024 * 1024 {
            received += endless.chunk().await.unwrap().unwrap().len();
        }
        drop(endless);

        let bomb = get(&server, "/hostile/bomb").await;
        assert_eq!(bomb.headers()["content-encoding"], "gzip");
        let compressed = bomb.bytes().await.unwrap();
        assert!(compressed.len() < 64 * 1024);
        let mut inflated = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&compressed[..]),
            &mut inflated,
        )
        .unwrap();
        assert_eq!(inflated.len(), 8 * 1024 * 1024);
    }

    #[tokio::test]
    async fn shutdown_stops_accepting_and_closes_hung_connections() {
        let server = start(&small_hostile_config()).await;
        let address = server.local_addr();
        let hung = tokio::spawn(client().get(server.url("/hostile/slow-headers")).send());
        tokio::time::sleep(Duration::from_millis(100)).await;
        server.shutdown();
        let outcome = tokio::time::timeout(Duration::from_secs(5), hung)
            .await
            .expect("hung request ended");
        assert!(outcome.unwrap().is_err());
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(tokio::net::TcpStream::connect(address).await.is_err());
    }
}
