#!/usr/bin/env python3
"""Markdown report for scripts/bench.sh.

    bench_report.py INFO.txt RUNS.tsv KEEP_DIR > results.md

INFO.txt holds key=value lines (machine, versions, parameters); RUNS.tsv
one line per measured run (see bench.sh for the columns); KEEP_DIR the
missing / extra URL lists and stderr tails of every run
(GROUP.TOOL.RUN.{missing,extra,stderr}, TOOL with non-alphanumerics as _).
"""

import csv
import os
import re
import statistics
import sys
from collections import OrderedDict

GROUP_TITLES = {
    'peers': 'Crawlers and the wire limit (nginx, all cores)',
    'cores': 'ringcrawl --cores 1 vs --cores 2 (nginx, all cores)',
    'pinned': 'ringcrawl on CPU 0, nginx (1 worker) on CPU 1',
    'https': 'HTTPS: the site over TLS (nginx ssl, a CA made for the run), all cores',
    'gzip': 'Compressed pages: the site served with nginx gzip on, beside the plain site, all cores',
}


def num(value, default=0.0):
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def ok(run):
    """Exit 0; or 8 for wget, which is how it says "the server answered an
    error" (the site's /missing/ pages are 404 on purpose)."""
    return run['exit'] == '0' or (run['tool'] == 'wget' and run['exit'] == '8')


def slug(tool):
    return re.sub(r'[^A-Za-z0-9]', '_', tool)


def fmt(value, digits=0):
    if value is None:
        return '—'
    if digits == 0:
        return f'{value:,.0f}'
    return f'{value:,.{digits}f}'


def read_info(path):
    info = OrderedDict()
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip('\n').partition('=')
            info.setdefault(key, []).append(value)
    return info


def read_runs(path):
    with open(path, newline='') as f:
        return list(csv.DictReader(f, delimiter='\t'))


def summarize(runs):
    """Medians over the runs of one tool (runs that exited 0, if any)."""
    good = [r for r in runs if ok(r)] or runs
    med = lambda key: statistics.median(num(r[key]) for r in good)
    wire = runs[0]['req_per_s'] != ''
    s = {
        'n': len(runs),
        'failed': sum(1 for r in runs if not ok(r)),
        'wire': wire,
        'wall': med('wall_s'),
        'cpu': statistics.median(num(r['user_s']) + num(r['sys_s']) for r in good),
        'rss_mib': med('rss_kb') / 1024,
        'requests': med('requests'),
        'nginx_cpu': med('nginx_cpu_s'),
        'expected': int(num(runs[0]['expected'])),
    }
    if wire:
        rates = [num(r['req_per_s']) for r in good]
        s['rate'] = med('req_per_s')
        s['fetched'] = None
        s['found'] = None
        s['extra'] = None
        s['cpu_per_page_us'] = s['cpu'] / (s['rate'] * s['wall']) * 1e6 if s['rate'] else None
    else:
        s['fetched'] = med('fetched')
        s['found'] = med('found')
        s['extra'] = med('extra')
        rates = [num(r['fetched']) / num(r['wall_s']) for r in good if num(r['wall_s']) > 0]
        s['rate'] = statistics.median(rates) if rates else None
        s['cpu_per_page_us'] = (statistics.median(
            (num(r['user_s']) + num(r['sys_s'])) / num(r['fetched']) * 1e6
            for r in good if num(r['fetched']) > 0) if any(num(r['fetched']) for r in good) else None)
    s['spread'] = f'{fmt(min(rates))}–{fmt(max(rates))}' if len(rates) > 1 else '—'
    return s


def table(groups):
    rows = ['| tool | found / expected | fetched | not expected | wall s | pages/s | pages/s min–max | CPU s | CPU µs/page | peak RSS MiB | nginx requests | nginx CPU s |',
            '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for tool, s in groups.items():
        name = tool + (f' ({s["failed"]}/{s["n"]} runs failed)' if s['failed'] else '')
        if s['wire']:
            rows.append(f'| {name} (wrk, req/s) | — | — | — | {fmt(s["wall"], 1)} | **{fmt(s["rate"])}** | {s["spread"]} | '
                        f'{fmt(s["cpu"], 2)} | {fmt(s["cpu_per_page_us"], 1)} | {fmt(s["rss_mib"], 1)} | '
                        f'{fmt(s["requests"])} | {fmt(s["nginx_cpu"], 2)} |')
        else:
            rows.append(f'| {name} | {fmt(s["found"])} / {fmt(s["expected"])} | {fmt(s["fetched"])} | '
                        f'{fmt(s["extra"])} | {fmt(s["wall"], 2)} | **{fmt(s["rate"])}** | {s["spread"]} | {fmt(s["cpu"], 2)} | '
                        f'{fmt(s["cpu_per_page_us"], 1)} | {fmt(s["rss_mib"], 1)} | {fmt(s["requests"])} | '
                        f'{fmt(s["nginx_cpu"], 2)} |')
    return '\n'.join(rows)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def ratios(groups, base):
    """ringcrawl (base) against every other tool of a group."""
    b = groups.get(base)
    if not b:
        return ''
    rows = [f'| {base} vs | pages/s ratio ({base} ÷ peer) | CPU per page (peer ÷ {base}) | peak RSS ({base} ÷ peer) |',
            '|---|---:|---:|---:|']
    for tool, s in groups.items():
        if tool == base:
            continue
        if s['wire']:
            rows.append(f'| {tool} | {fmt(ratio(b["rate"], s["rate"]), 2)} of wrk\'s req/s | — | — |')
        else:
            rows.append(f'| {tool} | {fmt(ratio(b["rate"], s["rate"]), 2)}× | '
                        f'{fmt(ratio(s["cpu_per_page_us"], b["cpu_per_page_us"]), 2)}× | '
                        f'{fmt(ratio(b["rss_mib"], s["rss_mib"]), 2)} |')
    return '\n'.join(rows)


def wire_share(crawls, wires, base, wrk):
    """The crawl's pages/s over wrk's keep-alive req/s, paired round by
    round (each crawl against the wrk run of its own round), with the
    crawl's CPU µs per page: scripts/wire.sh's figure."""
    rounds = {r['run']: r for r in wires if ok(r) and num(r['req_per_s']) > 0}
    shares, cpus = [], []
    for r in crawls:
        w = rounds.get(r['run'])
        if not ok(r) or w is None or num(r['wall_s']) <= 0 or num(r['fetched']) <= 0:
            continue
        shares.append(num(r['fetched']) / num(r['wall_s']) / num(w['req_per_s']))
        cpus.append((num(r['user_s']) + num(r['sys_s'])) / num(r['fetched']) * 1e6)
    if not shares:
        return f'- {base} ÷ {wrk}: no round with both'
    return (f'- **{base} ÷ {wrk}, paired by round: {fmt(statistics.median(shares), 2)} of wrk\'s req/s** '
            f'(min–max {fmt(min(shares), 2)}–{fmt(max(shares), 2)}, {len(shares)} rounds); '
            f'{base} CPU µs/page median {fmt(statistics.median(cpus), 1)} '
            f'({fmt(min(cpus), 1)}–{fmt(max(cpus), 1)})')


def read_lines(path, limit=None):
    try:
        with open(path) as f:
            lines = [l.rstrip('\n') for l in f if l.strip()]
    except OSError:
        return []
    return lines if limit is None else lines[:limit]


def kinds(urls):
    """Counts by path prefix: /p/, /r/, /r2/, /static/, /img/, /missing/, other."""
    counts = OrderedDict()
    for url in urls:
        path = re.sub(r'^[a-z]+://[^/]+', '', url)
        m = re.match(r'^/([a-z0-9]+)/', path)
        key = '/' + m.group(1) + '/' if m else path if path == '/' else 'other'
        counts[key] = counts.get(key, 0) + 1
    return ', '.join(f'{k} {v}' for k, v in counts.items())


def anomalies(runs, keep):
    out = []
    for r in runs:
        if r['req_per_s'] != '':
            if not ok(r) or num(r['req_per_s']) == 0:
                out.append(f'- {r["group"]}/{r["tool"]} run {r["run"]}: wrk exit {r["exit"]}, {r["req_per_s"] or 0} req/s')
            continue
        base = os.path.join(keep, f'{r["group"]}.{slug(r["tool"])}.{r["run"]}')
        missing = read_lines(base + '.missing')
        extra = read_lines(base + '.extra')
        own = r['tool'].startswith('ringcrawl')
        if not ok(r):
            err = ' / '.join(read_lines(base + '.stderr', 3))
            out.append(f'- {r["group"]}/{r["tool"]} run {r["run"]}: exit {r["exit"]}' + (f' (stderr: `{err}`)' if err else ''))
        if own and ok(r) and (missing or extra):
            out.append(f'- **BUG** {r["group"]}/{r["tool"]} run {r["run"]}: {len(missing)} expected URLs not fetched, '
                       f'{len(extra)} fetched but not expected')
            for url in missing[:20]:
                out.append(f'  - missing: {url}')
            for url in extra[:20]:
                out.append(f'  - not expected: {url}')
        elif not own and (missing or extra) and r['run'] == '1':
            line = f'- {r["group"]}/{r["tool"]} (run 1): {len(missing)} expected URLs not fetched'
            if missing:
                line += f' ({kinds(missing)}; e.g. {missing[0]})'
            line += f', {len(extra)} fetched but not expected'
            if extra:
                line += f' ({kinds(extra)}; e.g. {extra[0]})'
            out.append(line)
    return out


def main():
    info_path, runs_path, keep = sys.argv[1:4]
    info = read_info(info_path)
    runs = read_runs(runs_path)
    get = lambda key: ', '.join(info.get(key, ['']))

    print('# ringcrawl end-to-end benchmark')
    print()
    print(f'Generated by `scripts/bench.sh` on {get("date")}: ringcrawl {get("ringcrawl")}; '
          f'medians of {get("runs")} run(s) per tool, tools alternating run by run. '
          'The site is served by nginx on 127.0.0.1 from static files written by `ringcrawl-site --export`.')
    print()
    print('| | |')
    print('|---|---|')
    for key, label in [('nproc', 'nproc'), ('uname_r', 'uname -r'), ('cpu', 'CPU'), ('mem', 'memory'),
                       ('load', 'load average at start'), ('site', 'site'), ('max_tasks', 'concurrency (max tasks)'),
                       ('ringcrawl_flags', 'ringcrawl flags'), ('nginx', 'nginx'), ('wget', 'wget'), ('wrk', 'wrk'),
                       ('python', 'chapter crawler'), ('aiohttp', 'aiohttp'), ('spider', 'spider crate'),
                       ('wrk_seconds', 'wrk duration s')]:
        if get(key):
            print(f'| {label} | {get(key)} |')
    print()
    print('pages/s = distinct URLs the tool fetched ÷ wall time (for wrk: requests/s); CPU = user + sys of the '
          "tool's processes; CPU µs/page = CPU ÷ URLs fetched; nginx requests = requests nginx served during the "
          'run (retries and robots.txt included). ringcrawl (HTTP/1.1), aiohttp, wget and spider reuse '
          'keep-alive connections; `ringcrawl --no-keep-alive` opens one connection per page. wrk with '
          '`Connection: close` is the ceiling for one connection per page (the wire limit of --no-keep-alive), '
          'wrk with keep-alive the ceiling for reused connections.')

    by_group = OrderedDict()
    for r in runs:
        by_group.setdefault(r['group'], OrderedDict()).setdefault(r['tool'], []).append(r)
    for group, tools in by_group.items():
        summary = OrderedDict((tool, summarize(rs)) for tool, rs in tools.items())
        print()
        print(f'## {GROUP_TITLES.get(group, group)}')
        print()
        print(table(summary))
        base = next((t for t in summary if t.startswith('ringcrawl')), None)
        if group == 'cores' and len(summary) > 1:
            names = list(summary)
            first = summary[names[0]]
            print()
            for other in names[1:]:
                s = summary[other]
                print(f'- {other} ÷ {names[0]}: pages/s {fmt(ratio(s["rate"], first["rate"]), 2)}×, '
                      f'CPU per page {fmt(ratio(s["cpu_per_page_us"], first["cpu_per_page_us"]), 2)}×, '
                      f'peak RSS {fmt(ratio(s["rss_mib"], first["rss_mib"]), 2)}×')
        elif base and len(summary) > 1:
            print()
            print(ratios(summary, base))
            wrk = next((t for t in tools if tools[t][0]['req_per_s'] != '' and 'keep-alive' in t), None)
            if wrk:
                print()
                print(wire_share(tools[base], tools[wrk], base, wrk))
            # One connection per page against its own ceiling.
            one = next((t for t in summary if t.startswith('ringcrawl') and 'no-keep-alive' in t), None)
            close = next((t for t in summary if summary[t]['wire'] and 'keep-alive' not in t), None)
            if one and close:
                print()
                print(f'- {one} ÷ {close} (wrk, `Connection: close`): '
                      f'{fmt(ratio(summary[one]["rate"], summary[close]["rate"]), 2)} of wrk\'s req/s')

    problems = anomalies(runs, keep)
    skipped = info.get('skipped', [])
    print()
    print('## Anomalies')
    print()
    if not problems and not skipped:
        print('None: every ringcrawl crawl fetched exactly the expected URLs, and every tool exited 0 '
              '(wget: 8, its code for the 404s the site has on purpose).')
    for s in skipped:
        print(f'- skipped {s}')
    for p in problems:
        print(p)

    print()
    print('## Every run')
    print()
    print('| group | tool | run | exit | wall s | user s | sys s | RSS KiB | fetched | found | not expected | nginx requests | nginx CPU s | wrk req/s |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for r in runs:
        print('| ' + ' | '.join([r['group'], r['tool'], r['run'], r['exit'], r['wall_s'], r['user_s'], r['sys_s'],
                                 r['rss_kb'], r['fetched'], r['found'], r['extra'], r['requests'], r['nginx_cpu_s'],
                                 r['req_per_s']]) + ' |')


if __name__ == '__main__':
    main()
