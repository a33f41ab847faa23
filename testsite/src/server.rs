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
    let accept_loop = tokio::spawn(accept_connections(
        listener,
        Arc::clone(&site),
        Arc::clone(&log),
        stopped,
    ));
    Ok(ServerHandle {
        local_addr,
        site,
        log,
        shutdown: Some(shutdown),
        accept_loop,
    })
}

async fn accept_connections(
    listener: TcpListener,
    site: Arc<Site>,
    log: Arc<RequestLog>,
    mut stopped: watch::Receiver<()>,
) {
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
        let site = Arc::clone(&site);
        let log = Arc::clone(&log);
        let mut connection_stopped = stopped.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let site = Arc::clone(&site);
                let log = Arc::clone(&log);
                async move { Ok::<_, Infallible>(respond(&site, &log, request).await) }
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
