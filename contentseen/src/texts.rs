//! The stage's text segments: the `texts` writer of this namespace, its
//! segment numbers taken from the store (`INCR <ns>:segseq`, unique across
//! every contentseen writing to a shared directory).

use std::path::Path;
use std::sync::Arc;

use pipeline::keys::Keys;
use pipeline::store::Op;
use pipeline::Store;

/// Opens the text segments of `namespace` under `dir` (recovering the
/// segments killed writers left open).
pub async fn open(
    store: &Store,
    namespace: &str,
    dir: &Path,
) -> Result<texts::Writer, texts::TextError> {
    let store = store.clone();
    let key = Keys::new(namespace).segment_sequence();
    let next: texts::NextSegment = Arc::new(move || {
        let (store, key) = (store.clone(), key.clone());
        Box::pin(async move {
            let n = store
                .one(Op::Incr { key, by: 1 })
                .await
                .map_err(|e| e.to_string())?
                .int()
                .map_err(|e| e.to_string())?;
            u32::try_from(n).map_err(|_| format!("segment number {n} is out of range"))
        })
    });
    texts::Writer::open(texts::Settings::new(dir, namespace), next).await
}
