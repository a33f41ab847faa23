//! `crawler health`: exit 0 when a worker on this host keeps its heartbeat
//! fresh, for container healthchecks (`HEALTHCHECK`, compose `healthcheck:`).
//!
//! Every worker refreshes `<ns>:live:<stage>:<host>:<id>` every 250 ms with a
//! 3 s expiry (`pipeline::worker`); in a container the host is the
//! container's, so a key on this host means this container's worker runs and
//! reaches Redis. No key means the worker is gone, hung, or cut off.

use anyhow::{bail, Context};
use clap::Args;
use pipeline::keys::Keys;
use pipeline::Store;

#[derive(Args)]
pub struct HealthArgs {
    /// The host whose workers to look for (default: this one).
    #[arg(long)]
    pub host: Option<String>,
}

pub async fn run(service: &pipeline::ServiceConfig, a: HealthArgs) -> anyhow::Result<()> {
    let host = a.host.unwrap_or_else(pipeline::worker::host_name);
    let store = Store::redis(&service.redis_url)
        .await
        .context("connecting to redis")?;
    let keys = Keys::new(&service.namespace);
    let live = store
        .keys_matching(&keys.live_pattern_on(&host))
        .await
        .context("reading heartbeats")?;
    if live.is_empty() {
        bail!(
            "no worker heartbeat on host {host} in namespace {}",
            service.namespace
        );
    }
    println!("{} worker(s) alive on {host}", live.len());
    Ok(())
}
