//! The `extractor` worker binary: [`extractor::stage::ExtractorStage`] over RabbitMQ and Redis.

use clap::Parser;

/// Extracts title, time, author, body text and outlinks from fetched pages.
#[derive(Parser)]
#[command(name = "extractor", version)]
struct Args {
    #[command(flatten)]
    service: pipeline::ServiceConfig,
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (args, file) = pipeline::config::parse::<Args>("extractor")?;
    file.start_logs(args.service.log_json);
    let ns = args.service.namespace.clone();
    pipeline::worker::serve(&args.service, |_store| {
        extractor::stage::ExtractorStage::new(&ns)
    })
    .await
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_setting_of_the_command_line_can_come_from_the_file() {
        use clap::CommandFactory;
        let missing = pipeline::config::keys_without_setting(&super::Args::command());
        assert!(missing.is_empty(), "not in config::Settings: {missing:?}");
    }
}
