//! Serving many hosts from one process: a listener on each of several
//! loopback addresses, all on one port, each serving its host's pages (the
//! pipeline bench's site, [`crate::bench_site`], and the real sites with
//! their mirrors, [`crate::neardup_sites::sites`]).

use std::net::{Ipv4Addr, SocketAddr};

use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// A listener on each of `addrs`, in their order, all on one free port
/// (retried with another port when one of the addresses has it taken).
pub fn bind_one_port(addrs: &[Ipv4Addr]) -> std::io::Result<Vec<std::net::TcpListener>> {
    let mut last_error = None;
    if let Some((&head, rest)) = addrs.split_first() {
        for _ in 0..20 {
            let first = std::net::TcpListener::bind(SocketAddr::from((head, 0)))?;
            let port = first.local_addr()?.port();
            let mut listeners = vec![first];
            for &addr in rest {
                match std::net::TcpListener::bind(SocketAddr::from((addr, port))) {
                    Ok(listener) => listeners.push(listener),
                    Err(e) => {
                        last_error = Some(e);
                        break;
                    }
                }
            }
            if listeners.len() == addrs.len() {
                return Ok(listeners);
            }
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::other("could not bind the hosts")))
}

/// Serves the `i`-th of `listeners` with `respond(i)` on the current tokio
/// runtime ([`testsite::accept_until`]) until the sender returned is
/// dropped.
pub fn serve_each<F, R, Fut, B>(
    listeners: Vec<std::net::TcpListener>,
    respond: F,
) -> std::io::Result<watch::Sender<()>>
where
    F: Fn(usize) -> R,
    R: Fn(Request<Incoming>) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (shutdown, stopped) = watch::channel(());
    for (i, listener) in listeners.into_iter().enumerate() {
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        tokio::spawn(testsite::accept_until(
            listener,
            stopped.clone(),
            respond(i),
        ));
    }
    Ok(shutdown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn each_address_answers_with_its_own_handler_on_one_port() {
        let addrs: Vec<Ipv4Addr> = (0..3).map(|i| Ipv4Addr::new(127, 0, 0, 140 + i)).collect();
        let listeners = bind_one_port(&addrs).unwrap();
        let port = listeners[0].local_addr().unwrap().port();
        assert!(listeners
            .iter()
            .all(|l| l.local_addr().unwrap().port() == port));
        let shutdown = serve_each(listeners, |i| {
            move |_request: Request<Incoming>| async move {
                Response::new(http_body_util::Full::new(bytes::Bytes::from(format!(
                    "host {i}"
                ))))
            }
        })
        .unwrap();
        for (i, addr) in addrs.iter().enumerate() {
            let mut stream = tokio::net::TcpStream::connect((*addr, port)).await.unwrap();
            stream
                .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .await
                .unwrap();
            let mut reply = String::new();
            stream.read_to_string(&mut reply).await.unwrap();
            assert!(reply.ends_with(&format!("\r\n\r\nhost {i}")), "{reply}");
        }
        drop(shutdown);
    }
}
