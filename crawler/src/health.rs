//! `crawler health`: exit 0 when a worker on this host keeps its heartbeat
//! fresh, for container healthchecks (`HEALTHCHECK`, compose `healthcheck:`).
//!
//! Every worker refreshes its heartbeat every 250 ms with a 3 s expiry in
//! the live-worker index ([`pipeline::live`]), under the id
//! `<stage>:<host>:<id>`; in a container the host is the container's, so a
//! live worker of this host means this container's worker runs and reaches
//! Redis. None means the worker is gone, hung, or cut off.

use anyhow::{bail, Context};
use clap::Args;
use pipeline::keys::Keys;

#[derive(Args)]
pub struct HealthArgs {
    /// The host whose workers to look for (default: this one).
    #[arg(long)]
    pub host: Option<String>,
}

pub async fn run(service: &pipeline::ServiceConfig, a: HealthArgs) -> anyhow::Result<()> {
    let host = a.host.unwrap_or_else(pipeline::worker::host_name);
    let store = service.store().await.context("connecting to redis")?;
    let keys = Keys::new(&service.namespace);
    let live = pipeline::live::read(&store, &keys)
        .await
        .context("reading heartbeats")?;
    let here = live
        .iter()
        .filter(|(worker, _)| pipeline::live::host_of(worker) == Some(host.as_str()))
        .count();
    if here == 0 {
        bail!(
            "no worker heartbeat on host {host} in namespace {}",
            service.namespace
        );
    }
    println!("{here} worker(s) alive on {host}");
    Ok(())
}
