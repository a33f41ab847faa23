//! A small HTTP/1.1 server with keep-alive and canned responses, for what
//! the test site does not serve: content encodings, robots.txt that fails,
//! Retry-After dates, and a count of connections (the fetcher's tests).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One canned response.
#[derive(Clone)]
pub struct Canned {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Never answer.
    pub hang: bool,
}

impl Canned {
    pub fn text(status: u16, content_type: &str, body: &str) -> Canned {
        Canned {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.as_bytes().to_vec(),
            hang: false,
        }
    }

    pub fn html(body: &str) -> Canned {
        Canned::text(200, "text/html; charset=utf-8", body)
    }

    pub fn encoded(encoding: &str, body: Vec<u8>) -> Canned {
        Canned {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/html; charset=utf-8".into()),
                ("Content-Encoding".into(), encoding.into()),
            ],
            body,
            hang: false,
        }
    }

    pub fn hang() -> Canned {
        Canned {
            hang: true,
            ..Canned::text(200, "text/plain", "")
        }
    }
}

pub struct LocalServer {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    /// (path, request head in lower case)
    requests: Arc<Mutex<Vec<(String, String)>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl LocalServer {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn count(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .count()
    }

    pub fn headers(&self, path: &str) -> String {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, h)| h.clone())
            .unwrap_or_default()
    }
}

pub async fn local_server(routes: HashMap<String, Canned>) -> LocalServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let routes = Arc::new(routes);
    let accept = {
        let connections = connections.clone();
        let requests = requests.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(connection(stream, routes.clone(), requests.clone()));
            }
        })
    };
    LocalServer {
        addr,
        connections,
        requests,
        accept,
    }
}

/// Serves requests on one connection until the client closes it.
async fn connection(
    mut stream: tokio::net::TcpStream,
    routes: Arc<HashMap<String, Canned>>,
    requests: Arc<Mutex<Vec<(String, String)>>>,
) {
    let mut buf = Vec::new();
    loop {
        let end = loop {
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        buf.drain(..end);
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        requests.lock().unwrap().push((path.clone(), head));
        let canned = routes
            .get(&path)
            .cloned()
            .unwrap_or_else(|| Canned::text(404, "text/plain", "not found"));
        if canned.hang {
            std::future::pending::<()>().await;
        }
        let mut response = format!(
            "HTTP/1.1 {} X\r\nContent-Length: {}\r\n",
            canned.status,
            canned.body.len()
        );
        for (name, value) in &canned.headers {
            response.push_str(&format!("{name}: {value}\r\n"));
        }
        response.push_str("\r\n");
        if stream.write_all(response.as_bytes()).await.is_err()
            || stream.write_all(&canned.body).await.is_err()
        {
            return;
        }
    }
}
