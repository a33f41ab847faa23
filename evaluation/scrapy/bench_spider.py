"""Plain Scrapy on the pipeline benchmark's site (issue 19).

Run by `cargo bench -p evaluation --bench pipeline` through the `scrapy` of a
throwaway virtualenv (scripts/bench-pipeline.sh makes it):

    scrapy runspider bench_spider.py -a hosts=127.0.0.10,127.0.0.11 -a port=PORT -a out=stats.json

64 concurrent requests, 8 per domain (each loopback address is a domain),
robots.txt obeyed, no delay, depth limit 10 as the crawler's run; one item
per page (title and <article> text); every link followed (the off-site ones
are dropped by allowed_domains). Writes Scrapy's final stats as JSON to `out`.
"""

import json
from datetime import datetime, timezone

import scrapy


class BenchSpider(scrapy.Spider):
    name = "bench"
    custom_settings = {
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": True,
        "DEPTH_LIMIT": 10,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "USER_AGENT": "bench-scrapy (+http://example.invalid/bot)",
    }

    def __init__(self, hosts="", port="", out="", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.hosts = [h for h in hosts.split(",") if h]
        self.allowed_domains = list(self.hosts)
        self.start_urls = [f"http://{h}:{port}/" for h in self.hosts]
        self.out = out

    # The roots go through the duplicate filter too (Scrapy's default start
    # requests bypass it, and the pages' links to the roots would fetch them
    # again).
    async def start(self):  # Scrapy >= 2.13
        for url in self.start_urls:
            yield scrapy.Request(url, dont_filter=False)

    def start_requests(self):  # older Scrapy
        for url in self.start_urls:
            yield scrapy.Request(url, dont_filter=False)

    def parse(self, response):
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "text": " ".join(response.css("article ::text").getall()),
        }
        yield from response.follow_all(response.css("a::attr(href)").getall(), callback=self.parse)

    def closed(self, reason):
        if not self.out:
            return
        stats = {}
        for key, value in self.crawler.stats.get_stats().items():
            stats[key] = value if isinstance(value, (int, float, str)) else str(value)
        stats["close_reason"] = reason
        # CoreStats sets elapsed_time_seconds after this runs: measure it.
        started = self.crawler.stats.get_value("start_time")
        if isinstance(started, datetime):
            now = datetime.now(started.tzinfo) if started.tzinfo else datetime.now(timezone.utc).replace(tzinfo=None)
            stats["bench_elapsed_seconds"] = (now - started).total_seconds()
        with open(self.out, "w") as f:
            json.dump(stats, f)
