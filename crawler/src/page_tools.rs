//! `crawler extract` and `crawler charset`: one saved page at a time, with the
//! same charset vote and extraction as the workers, and no service.

use charset::Signals;
use clap::Args;
use serde_json::json;

#[derive(Args)]
pub struct ExtractArgs {
    /// The page's URL (resolves its links); default: `file://<path>`.
    #[arg(long)]
    pub url: Option<String>,
    /// The charset the HTTP header claimed, if any.
    #[arg(long)]
    pub header_charset: Option<String>,
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
}

#[derive(Args)]
pub struct CharsetArgs {
    /// The charset the HTTP header claimed, if any.
    #[arg(long)]
    pub header_charset: Option<String>,
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
}

fn page_url(given: Option<&str>, path: &std::path::Path) -> anyhow::Result<url::Url> {
    if let Some(u) = given {
        return Ok(url::Url::parse(u)?);
    }
    let abs = std::fs::canonicalize(path)?;
    url::Url::from_file_path(&abs).map_err(|_| anyhow::anyhow!("no URL for {}", abs.display()))
}

/// Runs `each` on every readable file, printing what it returns as a JSON
/// line (with the file's name); an unreadable file is reported and counted.
fn for_each_file(
    files: &[std::path::PathBuf],
    mut each: impl FnMut(&std::path::Path, &[u8]) -> anyhow::Result<serde_json::Value>,
) -> anyhow::Result<()> {
    let mut failures = 0;
    for path in files {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                failures += 1;
                continue;
            }
        };
        let mut v = each(path, &bytes)?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("file".into(), json!(path.display().to_string()));
        }
        println!("{v}");
    }
    if failures > 0 {
        anyhow::bail!("{failures} file(s) could not be read");
    }
    Ok(())
}

pub fn extract(args: ExtractArgs) -> anyhow::Result<()> {
    for_each_file(&args.files, |path, bytes| {
        let url = page_url(args.url.as_deref(), path)?;
        let signals = Signals {
            header: args.header_charset.as_deref(),
            tld: url.host_str().and_then(charset::tld).map(str::as_bytes),
            override_encoding: None,
        };
        let (decision, text) = charset::decide_and_decode(bytes, &signals);
        let article = extractor::extract_with(&text, &url, extractor::Parts { body_html: true });
        let mut doc = serde_json::to_value(&article)?;
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("url".into(), json!(url.as_str()));
            obj.insert("encoding".into(), json!(decision.encoding));
        }
        Ok(doc)
    })
}

pub fn charset(args: CharsetArgs) -> anyhow::Result<()> {
    for_each_file(&args.files, |_, bytes| {
        let decision = charset::vote(
            bytes,
            &Signals {
                header: args.header_charset.as_deref(),
                tld: None,
                override_encoding: None,
            },
        );
        Ok(serde_json::to_value(&decision)?)
    })
}
