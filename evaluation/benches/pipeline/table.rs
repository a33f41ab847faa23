//! The printed comparison of the runs: pages/s, CPU ms per page of every
//! process, Redis commands, broker deliveries and bytes per page, peak RSS.

use super::*;

pub(crate) fn print_table(outcomes: &[&Outcome], scrapy: Option<&Outcome>) {
    println!("\n## Pipeline benchmark results\n");
    let fmt_rss =
        |k: Option<u64>| k.map_or("-".to_string(), |k| format!("{:.1} MB", k as f64 / 1024.0));
    for o in outcomes.iter().copied().chain(scrapy) {
        println!("### {}", o.label);
        println!(
            "pages: {}   wall: {:.2} s   pages/s: {:.1}",
            o.pages,
            o.wall_secs,
            o.pages_per_sec()
        );
        if let Some(s) = scrapy.filter(|s| s.pages > 0 && !std::ptr::eq(*s, o)) {
            println!(
                "ratio to Scrapy: {:.2}×",
                o.pages_per_sec() / s.pages_per_sec()
            );
        }
        println!(
            "{:<28} {:>12} {:>14} {:>12}",
            "process", "CPU s", "CPU ms/page", "peak RSS"
        );
        let mut total = 0.0;
        for p in &o.procs {
            total += p.cpu_secs;
            println!(
                "{:<28} {:>12.2} {:>14.3} {:>12}",
                p.name,
                p.cpu_secs,
                o.ms_per_page(p.cpu_secs),
                fmt_rss(p.peak_rss_kib)
            );
        }
        total += o.server_cpu_secs;
        println!(
            "{:<28} {:>12.2} {:>14.3} {:>12}",
            "site server (bench process)",
            o.server_cpu_secs,
            o.ms_per_page(o.server_cpu_secs),
            "-"
        );
        println!(
            "{:<28} {:>12.2} {:>14.3}   ({:.2} of 2 cores busy over the wall time)",
            "total",
            total,
            o.ms_per_page(total),
            total / o.wall_secs.max(1e-9)
        );
        if let Some(c) = o.redis_commands {
            println!(
                "Redis commands/page: {:.1} ({c} in all)",
                c as f64 / o.pages.max(1) as f64
            );
        }
        if let Some(m) = o.amqp_messages {
            println!(
                "RabbitMQ messages (deliveries)/page: {:.2} ({m} in all)",
                m as f64 / o.pages.max(1) as f64
            );
        }
        if let Some((recv, send)) = o.amqp_bytes {
            let n = o.pages.max(1) as f64;
            println!(
                "RabbitMQ bytes/page: {:.0} (into the broker {:.0} + out of it {:.0})",
                (recv + send) as f64 / n,
                recv as f64 / n,
                send as f64 / n
            );
        }
        for note in &o.notes {
            println!("  - {note}");
        }
        println!();
    }
    // The summary line of each figure side by side.
    println!("### Summary");
    let all: Vec<&Outcome> = outcomes.iter().copied().chain(scrapy).collect();
    print!("{:<34}", "");
    for o in &all {
        print!("{:>16}", o.label);
    }
    println!();
    let row = |name: &str, f: &dyn Fn(&Outcome) -> String| {
        print!("{name:<34}");
        for o in &all {
            print!("{:>16}", f(o));
        }
        println!();
    };
    row("pages", &|o| o.pages.to_string());
    row("pages/s", &|o| format!("{:.1}", o.pages_per_sec()));
    row(
        "ratio to Scrapy",
        &|o| match scrapy.filter(|s| s.pages > 0) {
            Some(s) => format!("{:.2}×", o.pages_per_sec() / s.pages_per_sec()),
            None => "(skipped)".into(),
        },
    );
    let mut names: Vec<String> = Vec::new();
    for o in &all {
        for p in &o.procs {
            if !names.contains(&p.name) {
                names.push(p.name.clone());
            }
        }
    }
    for name in &names {
        row(&format!("CPU ms/page {name}"), &|o| {
            o.procs
                .iter()
                .find(|p| &p.name == name)
                .map_or("-".into(), |p| format!("{:.3}", o.ms_per_page(p.cpu_secs)))
        });
    }
    row("CPU ms/page site server", &|o| {
        format!("{:.3}", o.ms_per_page(o.server_cpu_secs))
    });
    row("CPU ms/page total", &|o| {
        let total: f64 = o.procs.iter().map(|p| p.cpu_secs).sum::<f64>() + o.server_cpu_secs;
        format!("{:.3}", o.ms_per_page(total))
    });
    row("Redis commands/page", &|o| {
        o.redis_commands.map_or("-".into(), |c| {
            format!("{:.1}", c as f64 / o.pages.max(1) as f64)
        })
    });
    row("RabbitMQ messages/page", &|o| {
        o.amqp_messages.map_or("-".into(), |c| {
            format!("{:.2}", c as f64 / o.pages.max(1) as f64)
        })
    });
    row("RabbitMQ bytes/page", &|o| {
        o.amqp_bytes.map_or("-".into(), |(r, s)| {
            format!("{:.0}", (r + s) as f64 / o.pages.max(1) as f64)
        })
    });
    let with_rss: Vec<&String> = names
        .iter()
        .filter(|n| {
            all.iter()
                .flat_map(|o| &o.procs)
                .any(|p| &&p.name == n && p.peak_rss_kib.is_some())
        })
        .collect();
    for name in with_rss {
        row(&format!("peak RSS {name}"), &|o| {
            o.procs
                .iter()
                .find(|p| &p.name == name)
                .map_or("-".into(), |p| fmt_rss(p.peak_rss_kib))
        });
    }
}
