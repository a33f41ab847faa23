//! The real sites: which they are (`evaluation/neardup_sites/sites.tsv`),
//! their pages, which pages are held aside, and the server that shows each
//! site on its own loopback host and again on a mirror host.

use std::collections::HashMap;
use std::io::Read;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::sync::watch;

/// The table of sites, beside this crate.
pub fn table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("neardup_sites/sites.tsv")
}

/// One site of the table.
#[derive(Debug, Clone)]
pub struct Site {
    pub name: String,
    /// `doc` (a Debian package's folder) or the `../shared/bench` set.
    pub source: String,
    pub root: PathBuf,
    /// Only these subfolders of `root` (all when empty).
    pub only: Vec<String>,
    /// The whole site is held aside.
    pub held_aside: bool,
    /// The Debian package that installs it (`None`: `../shared/bench`).
    pub package: Option<String>,
}

/// One page: a file of a site, served at `path` on both hosts.
#[derive(Debug, Clone)]
pub struct Page {
    /// Index into the sites.
    pub site: usize,
    /// The URL path (a `.gz` file is served decompressed, without `.gz`).
    pub path: String,
    pub file: PathBuf,
    pub held_aside: bool,
}

/// The sites of the table at `tsv`; sets of `../shared/bench` are found
/// under `bench`. `only`: keep these names (all when empty).
pub fn read_sites(tsv: &Path, bench: &Path, only: &[String]) -> Result<Vec<Site>, String> {
    let text = std::fs::read_to_string(tsv).map_err(|e| format!("{}: {e}", tsv.display()))?;
    let mut out = Vec::new();
    for (line, f) in crate::tsv_rows(&text) {
        let [name, source, root, subs, held, package] = f[..] else {
            return Err(format!(
                "{}:{line}: not 6 tab-separated fields: {}",
                tsv.display(),
                f.join("\t")
            ));
        };
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        out.push(Site {
            name: name.into(),
            source: source.into(),
            root: if source == "doc" {
                PathBuf::from(root)
            } else {
                bench.join(root)
            },
            only: if subs == "-" {
                Vec::new()
            } else {
                subs.split(',').map(str::to_string).collect()
            },
            held_aside: held == "yes",
            package: (package != "-").then(|| package.to_string()),
        });
    }
    Ok(out)
}

/// Characters a served path may hold as they are (no percent-encoding
/// needed, nothing a URL normalizer rewrites).
fn plain_path(path: &str) -> bool {
    path.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~'))
}

/// Every page of `sites` (HTML files, `.html` or `.html.gz`, symlinks
/// followed), by site and then path, and how many files were left out
/// because their path would need percent-encoding.
pub fn pages(sites: &[Site]) -> Result<(Vec<Page>, usize), String> {
    let mut out = Vec::new();
    let mut odd = 0;
    for (i, site) in sites.iter().enumerate() {
        let tops: Vec<PathBuf> = if site.only.is_empty() {
            vec![site.root.clone()]
        } else {
            site.only.iter().map(|o| site.root.join(o)).collect()
        };
        let mut found = Vec::new();
        for top in tops {
            if !top.is_dir() {
                return Err(format!(
                    "{}: no such folder (site {}{}): run scripts/neardup-sites.sh",
                    top.display(),
                    site.name,
                    site.package
                        .as_ref()
                        .map(|p| format!(", package {p}"))
                        .unwrap_or_default()
                ));
            }
            walk(&top, 0, &mut found)?;
        }
        let mut site_pages = Vec::new();
        for file in found {
            let Ok(rel) = file.strip_prefix(&site.root) else {
                continue;
            };
            let mut path = format!("/{}", rel.to_string_lossy());
            if let Some(p) = path.strip_suffix(".gz") {
                path = p.to_string();
            }
            if !plain_path(&path) {
                odd += 1;
                continue;
            }
            let held_aside =
                site.held_aside || crate::split::held_aside(&format!("{}:{path}", site.name));
            site_pages.push(Page {
                site: i,
                path,
                file,
                held_aside,
            });
        }
        site_pages.sort_by(|a, b| a.path.cmp(&b.path));
        out.extend(site_pages);
    }
    Ok((out, odd))
}

/// The HTML files under `dir` (symlinks followed, at most 16 levels deep).
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if depth > 16 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let name = path.to_string_lossy();
        if meta.is_dir() {
            walk(&path, depth + 1, out)?;
        } else if name.ends_with(".html") || name.ends_with(".html.gz") {
            out.push(path);
        }
    }
    Ok(())
}

/// The first octet of the hosts: site i is served on 127.0.0.(FIRST + 2i)
/// and mirrored on the next address.
pub const FIRST_HOST_OCTET: u8 = 200;

/// The address of site `site`'s copy (`mirror`: the second copy).
pub fn host_addr(site: usize, mirror: bool) -> Ipv4Addr {
    let octet = FIRST_HOST_OCTET as usize + 2 * site + usize::from(mirror);
    assert!(
        octet < 255,
        "at most {} sites",
        (255 - FIRST_HOST_OCTET) / 2
    );
    Ipv4Addr::new(127, 0, 0, octet as u8)
}

/// A URL's (site, mirror) from its host, when it is one of ours.
pub fn host_of(host: Ipv4Addr) -> Option<(usize, bool)> {
    let [127, 0, 0, octet] = host.octets() else {
        return None;
    };
    let i = usize::from(octet.checked_sub(FIRST_HOST_OCTET)?);
    Some((i / 2, i % 2 == 1))
}

/// Both copies of every site, served from the files on each request.
pub struct SiteServer {
    pub port: u16,
    shutdown: Option<watch::Sender<()>>,
}

impl SiteServer {
    /// Binds both hosts of every site on one free port and serves the
    /// pages on the current tokio runtime.
    pub async fn start(sites: usize, pages: &[Page]) -> std::io::Result<SiteServer> {
        let mut files: HashMap<(usize, String), PathBuf> = HashMap::new();
        for p in pages {
            files.insert((p.site, p.path.clone()), p.file.clone());
        }
        let files = Arc::new(files);
        // Listener 2i serves site i, 2i + 1 its mirror.
        let hosts: Vec<Ipv4Addr> = (0..sites)
            .flat_map(|s| [host_addr(s, false), host_addr(s, true)])
            .collect();
        let listeners = crate::loopback::bind_one_port(&hosts)?;
        let port = listeners[0].local_addr()?.port();
        let shutdown = crate::loopback::serve_each(listeners, |i| {
            let files = Arc::clone(&files);
            move |request: Request<Incoming>| {
                let files = Arc::clone(&files);
                async move { respond(&files, i / 2, &request) }
            }
        })?;
        Ok(SiteServer {
            port,
            shutdown: Some(shutdown),
        })
    }

    /// The URL of `path` on site `site`'s copy.
    pub fn url(&self, site: usize, mirror: bool, path: &str) -> String {
        format!("http://{}:{}{path}", host_addr(site, mirror), self.port)
    }
}

impl Drop for SiteServer {
    fn drop(&mut self) {
        self.shutdown.take();
    }
}

/// A page's bytes as served (a `.gz` file decompressed).
pub fn read_page(file: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = std::fs::read(file)?;
    if file.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut out)?;
        Ok(out)
    } else {
        Ok(bytes)
    }
}

fn respond(
    files: &HashMap<(usize, String), PathBuf>,
    site: usize,
    request: &Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    let page = files
        .get(&(site, path))
        .and_then(|file| read_page(file).ok());
    let (status, body) = match page {
        Some(bytes) => (200, Bytes::from(bytes)),
        None => (
            404,
            Bytes::from_static(b"<html><body>Not Found</body></html>"),
        ),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    // No charset: the page's own declaration and the charset vote decide,
    // as for a saved page served by a plain file server.
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/html"),
    );
    response
}
