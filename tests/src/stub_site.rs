//! A stub web site for the tests that need one page or a few: a thread on
//! 127.0.0.1 that answers every request with what a handler returns.

use std::io::{Read, Write};
use std::net::TcpListener;

/// One response of a stub site.
pub struct Response {
    pub status: &'static str,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// A request as the stub saw it: its path and its headers' text.
pub struct Request {
    pub path: String,
    pub head: String,
}

impl Request {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// Serves `handler`'s answers on a free port of 127.0.0.1 until the test
/// process ends (one connection at a time, `Connection: close`); returns
/// `http://127.0.0.1:PORT`.
pub fn serve(handler: impl Fn(&Request) -> Response + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let port = listener.local_addr().expect("local address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            let response = handler(&Request { path, head });
            let start = format!(
                "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                response.status,
                response.content_type,
                response.body.len()
            );
            let _ = stream.write_all(start.as_bytes());
            let _ = stream.write_all(&response.body);
        }
    });
    format!("http://127.0.0.1:{port}")
}
