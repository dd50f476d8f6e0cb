#!/usr/bin/env python3
"""The crawler of "A Web Crawler With asyncio Coroutines" (A. Jesse Jiryu Davis
and Guido van Rossum, *500 Lines or Less*), ported to today's asyncio and
aiohttp, as a peer for scripts/bench.sh.

This follows the chapter's final code (crawler/code/crawling.py and
crawl.py) line by line: one asyncio.Queue of (url, max_redirect), max_tasks
worker coroutines, a seen_urls set, `Queue.join()` to know when the crawl
is done; links found with the chapter's regex on text/html and
application/xml bodies of 200 responses only; the chapter's strict /
lenient host check; redirects (300, 301, 302, 303, 307) not followed by
aiohttp but resolved and queued with one redirect fewer, skipped if already
seen; up to max_tries attempts on aiohttp.ClientError.

What changed, and why:
- `@asyncio.coroutine` / `yield from` became `async def` / `await`, the
  `loop=` arguments are gone and the aiohttp session is made inside the
  running loop (all required by current Python and aiohttp).
- `cgi.parse_header` (gone in Python 3.13) is replaced by an equivalent.
- `urllib.parse.splitport` (deprecated) is replaced by `urlsplit().hostname`.
- A worker catches any exception from one fetch (recording it) instead of
  dying: in the chapter a non-ClientError (a timeout, a payload error)
  killed the worker and `q.join()` then waited forever.
- `-o FILE` writes one line per fetched URL (url, status, next_url, error),
  tab-separated, for the benchmark to compare with the expected URL list.

Like the chapter it uses aiohttp's defaults: HTTP/1.1 with keep-alive, at
most 100 pooled connections.

Usage: chapter_crawler.py [--max_tasks N] [--max_redirect N] [--max_tries N]
                          [--exclude REGEX] [--strict | --lenient]
                          [-o FILE] ROOT...
"""

import argparse
import asyncio
import email.message
import inspect
import logging
import re
import sys
import time
import urllib.parse
from collections import namedtuple

import aiohttp

LOGGER = logging.getLogger(__name__)


def lenient_host(host):
    parts = host.split('.')[-2:]
    return ''.join(parts)


def is_redirect(response):
    return response.status in (300, 301, 302, 303, 307)


def parse_header(line):
    """What cgi.parse_header returned: (main value lower-cased, params)."""
    msg = email.message.Message()
    msg['content-type'] = line
    params = dict(msg.get_params()[1:])
    return msg.get_content_type(), params


FetchStatistic = namedtuple('FetchStatistic',
                            ['url',
                             'next_url',
                             'status',
                             'exception',
                             'size',
                             'content_type',
                             'encoding',
                             'num_urls',
                             'num_new_urls'])


class Crawler:
    """Crawl a set of URLs.

    This manages two sets of URLs: 'urls' and 'done'.  'urls' is a set of
    URLs seen, and 'done' is a list of FetchStatistics.
    """
    def __init__(self, roots,
                 exclude=None, strict=True,  # What to crawl.
                 max_redirect=10, max_tries=4,  # Per-url limits.
                 max_tasks=10):
        self.roots = roots
        self.exclude = exclude
        self.strict = strict
        self.max_redirect = max_redirect
        self.max_tries = max_tries
        self.max_tasks = max_tasks
        self.q = asyncio.Queue()
        self.seen_urls = set()
        self.done = []
        self.session = None
        self.root_domains = set()
        for root in roots:
            host = urllib.parse.urlsplit(root).hostname
            if not host:
                continue
            if re.match(r'\A[\d\.]*\Z', host):
                self.root_domains.add(host)
            else:
                host = host.lower()
                if self.strict:
                    self.root_domains.add(host)
                else:
                    self.root_domains.add(lenient_host(host))
        for root in roots:
            self.add_url(root)
        self.t0 = time.time()
        self.t1 = None

    async def close(self):
        """Close resources."""
        if self.session is not None:
            await self.session.close()

    def host_okay(self, host):
        """Check if a host should be crawled.

        A literal match (after lowercasing) is always good.  For hosts
        that don't look like IP addresses, some approximate matches
        are okay depending on the strict flag.
        """
        host = host.lower()
        if host in self.root_domains:
            return True
        if re.match(r'\A[\d\.]*\Z', host):
            return False
        if self.strict:
            return self._host_okay_strictish(host)
        else:
            return self._host_okay_lenient(host)

    def _host_okay_strictish(self, host):
        """Check if a host should be crawled, strict-ish version.

        This checks for equality modulo an initial 'www.' component.
        """
        host = host[4:] if host.startswith('www.') else 'www.' + host
        return host in self.root_domains

    def _host_okay_lenient(self, host):
        """Check if a host should be crawled, lenient version.

        This compares the last two components of the host.
        """
        return lenient_host(host) in self.root_domains

    def record_statistic(self, fetch_statistic):
        """Record the FetchStatistic for completed / failed URL."""
        self.done.append(fetch_statistic)

    async def parse_links(self, response):
        """Return a FetchStatistic and list of links."""
        links = set()
        content_type = None
        encoding = None
        body = await response.read()

        if response.status == 200:
            content_type = response.headers.get('content-type')
            pdict = {}

            if content_type:
                content_type, pdict = parse_header(content_type)

            encoding = pdict.get('charset', 'utf-8')
            if content_type in ('text/html', 'application/xml'):
                text = await response.text()

                # Replace href with (?:href|src) to follow image links.
                urls = set(re.findall(r'''(?i)href=["']([^\s"'<>]+)''',
                                      text))
                if urls:
                    LOGGER.info('got %r distinct urls from %r',
                                len(urls), response.url.human_repr())
                for url in urls:
                    normalized = urllib.parse.urljoin(str(response.url), url)
                    defragmented, frag = urllib.parse.urldefrag(normalized)
                    if self.url_allowed(defragmented):
                        links.add(defragmented)

        stat = FetchStatistic(
            url=response.url,
            next_url=None,
            status=response.status,
            exception=None,
            size=len(body),
            content_type=content_type,
            encoding=encoding,
            num_urls=len(links),
            num_new_urls=len(links - self.seen_urls))

        return stat, links

    async def fetch(self, url, max_redirect):
        """Fetch one URL."""
        tries = 0
        exception = None
        while tries < self.max_tries:
            try:
                response = await self.session.get(
                    url, allow_redirects=False)

                if tries > 1:
                    LOGGER.info('try %r for %r success', tries, url)

                break
            except aiohttp.ClientError as client_error:
                LOGGER.info('try %r for %r raised %r', tries, url, client_error)
                exception = client_error

            tries += 1
        else:
            # We never broke out of the loop: all tries failed.
            LOGGER.error('%r failed after %r tries',
                         url, self.max_tries)
            self.record_statistic(FetchStatistic(url=url,
                                                 next_url=None,
                                                 status=None,
                                                 exception=exception,
                                                 size=0,
                                                 content_type=None,
                                                 encoding=None,
                                                 num_urls=0,
                                                 num_new_urls=0))
            return

        try:
            if is_redirect(response):
                location = response.headers['location']
                next_url = urllib.parse.urljoin(url, location)
                self.record_statistic(FetchStatistic(url=url,
                                                     next_url=next_url,
                                                     status=response.status,
                                                     exception=None,
                                                     size=0,
                                                     content_type=None,
                                                     encoding=None,
                                                     num_urls=0,
                                                     num_new_urls=0))

                if next_url in self.seen_urls:
                    return
                if max_redirect > 0:
                    LOGGER.info('redirect to %r from %r', next_url, url)
                    self.add_url(next_url, max_redirect - 1)
                else:
                    LOGGER.error('redirect limit reached for %r from %r',
                                 next_url, url)
            else:
                stat, links = await self.parse_links(response)
                self.record_statistic(stat)
                for link in links.difference(self.seen_urls):
                    self.q.put_nowait((link, self.max_redirect))
                self.seen_urls.update(links)
        finally:
            released = response.release()
            if inspect.isawaitable(released):  # Older aiohttp returned a coroutine.
                await released

    async def work(self):
        """Process queue items forever."""
        try:
            while True:
                url, max_redirect = await self.q.get()
                assert url in self.seen_urls
                try:
                    await self.fetch(url, max_redirect)
                except Exception as exc:  # Not in the chapter: see the docstring.
                    LOGGER.error('%r raised %r', url, exc)
                    self.record_statistic(FetchStatistic(
                        url=url, next_url=None, status=None, exception=exc,
                        size=0, content_type=None, encoding=None,
                        num_urls=0, num_new_urls=0))
                self.q.task_done()
        except asyncio.CancelledError:
            pass

    def url_allowed(self, url):
        if self.exclude and re.search(self.exclude, url):
            return False
        parts = urllib.parse.urlparse(url)
        if parts.scheme not in ('http', 'https'):
            LOGGER.debug('skipping non-http scheme in %r', url)
            return False
        host = parts.hostname
        if not host or not self.host_okay(host):
            LOGGER.debug('skipping non-root host in %r', url)
            return False
        return True

    def add_url(self, url, max_redirect=None):
        """Add a URL to the queue if not seen before."""
        if max_redirect is None:
            max_redirect = self.max_redirect
        LOGGER.debug('adding %r %r', url, max_redirect)
        self.seen_urls.add(url)
        self.q.put_nowait((url, max_redirect))

    async def crawl(self):
        """Run the crawler until all finished."""
        self.session = aiohttp.ClientSession()
        workers = [asyncio.create_task(self.work())
                   for _ in range(self.max_tasks)]
        self.t0 = time.time()
        await self.q.join()
        self.t1 = time.time()
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


def fix_url(url):
    """Prefix a schema-less URL with http://."""
    if '://' not in url:
        url = 'http://' + url
    return url


def main():
    parser = argparse.ArgumentParser(description='Web crawler (500 Lines or Less chapter, ported)')
    parser.add_argument('roots', nargs='+', help='Root URL (may be repeated)')
    parser.add_argument('--max_redirect', type=int, default=10)
    parser.add_argument('--max_tries', type=int, default=4)
    parser.add_argument('--max_tasks', type=int, default=100)
    parser.add_argument('--exclude', metavar='REGEX')
    parser.add_argument('--strict', action='store_true', default=True)
    parser.add_argument('--lenient', action='store_false', dest='strict')
    parser.add_argument('-o', '--output', metavar='FILE',
                        help='one line per fetched URL: url, status, next_url, error')
    parser.add_argument('-v', '--verbose', action='count', default=0)
    args = parser.parse_args()

    levels = [logging.ERROR, logging.WARN, logging.INFO, logging.DEBUG]
    logging.basicConfig(level=levels[min(args.verbose, len(levels) - 1)])

    async def run():
        crawler = Crawler([fix_url(root) for root in args.roots],
                          exclude=args.exclude, strict=args.strict,
                          max_redirect=args.max_redirect,
                          max_tries=args.max_tries, max_tasks=args.max_tasks)
        try:
            await crawler.crawl()
        finally:
            await crawler.close()
        return crawler

    crawler = asyncio.run(run())
    if args.output:
        with open(args.output, 'w') as out:
            for stat in crawler.done:
                error = '' if stat.exception is None else repr(stat.exception).replace('\t', ' ')
                out.write('%s\t%s\t%s\t%s\n' % (stat.url, stat.status, stat.next_url or '', error))
    elapsed = crawler.t1 - crawler.t0
    ok = sum(1 for s in crawler.done if s.status is not None)
    print('%d urls fetched (%d with a response) in %.3f secs' % (len(crawler.done), ok, elapsed),
          file=sys.stderr)


if __name__ == '__main__':
    main()
