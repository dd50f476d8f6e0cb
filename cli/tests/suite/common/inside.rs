//! Crawls the builder refuses, run on its internal configuration: a
//! seen-set of less than 1 MiB a shard (to reach its disk path within a
//! test's few thousand URLs). The one place the suite's crawls reach
//! inside the library (the `internals` feature); every other crawl goes
//! through `Crawler::builder()`. (Roots of a scheme the crawler does not
//! fetch are the library's own unit test, `src/api/refused_crawls.rs`.)

use ringcrawl::config::Config;

use super::{ran_out_of_work, within_hang_limit, CrawlerBuilder, Outcome};

/// Crawl with `settings`, as [`super::crawl`] does, after `beyond` changed
/// what the builder would refuse in the configuration they make. Page
/// hooks are left out.
pub fn crawl(settings: CrawlerBuilder, beyond: impl FnOnce(&mut Config)) -> Outcome {
    let crawler = settings.build().expect("valid settings");
    let mut config = crawler.config().clone();
    beyond(&mut config);
    let interrupt = crawler.interrupt_handle();
    let flag = interrupt.flag();
    let outcome = within_hang_limit(interrupt, || {
        ringcrawl::crawl::run(config, flag).expect("crawl runs")
    });
    let mut stats = outcome
        .stats
        .report_data(outcome.elapsed, outcome.interrupted);
    stats.budget_spent = outcome.spent;
    ran_out_of_work(Outcome {
        records: outcome.records,
        stats,
        elapsed: outcome.elapsed,
        aborted: outcome.aborted,
        interrupted: outcome.interrupted,
        spent: outcome.spent,
        output_error: outcome.output_error,
    })
}
