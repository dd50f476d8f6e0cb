#!/usr/bin/env python3
"""Where a crawl's CPU goes, by stage: a table from `perf script` output.

    perf record -F 1999 --call-graph dwarf,16384 -o perf.data \\
        target/release/ringcrawl URL --max-tasks 100 -q --per-host 100 \\
        --ignore-robots --no-sitemaps -o /tmp/out.jsonl
    perf script -i perf.data -F comm,ip,sym > stacks.txt
    scripts/perf_breakdown.py stacks.txt            # the table
    SHOW='link scan' scripts/perf_breakdown.py stacks.txt   # one row's detail

Each sample goes to the first stage below whose pattern matches a frame
of its stack (so a URL parse inside the link scan counts as URL
resolution, not as the scan; a record written from the routing code counts
as the record). Shares are of all samples of the process: its threads,
the kernel work its system calls do, libc. `perf` needs the release
binary's debug info (the release profile keeps it) and DWARF unwinding
(Rust code keeps no frame pointers).
"""

import collections
import os
import re
import sys

# (stage, pattern over frames); the first that matches wins. A callable
# decides from the whole sample (its thread name first).
STAGES = [
    ('output thread (JSONL, WARC writes)', lambda s: s[0] == 'ringcrawl-out'),
    ('URL resolve + normalise (url crate)', r'ringcrawl_links::urls::(resolve|join_in|normalize)|url::parser'),
    ('link scan (scanner, attributes, dedup)', r'ringcrawl_links::extract::'),
    ('record build + serialise', r'output::record|record_for|shard::page::.*emit|write_record|serde_json'),
    ('seen-set lookup', r'crawl::seen::'),
    ('mesh (links to other shards)', r'mesh::'),
    ('frontier (queues, politeness)', r'frontier::'),
    ('routing (host, scope, strip, journal)', r'shard::seen::|route_found|route_jobs'),
    ('HTTP head parse', r'http::head|HeadScan|httparse'),
    ('request build', r'Request::to_bytes|http::request'),
    ('send: syscall and kernel TCP', r'send_syscall|__libc_send|__sys_sendto'),
    ('recv: syscall and kernel TCP', r'recv_syscall|__libc_recv|__sys_recvfrom'),
    ('io_uring submit/complete, reactor', r'io_uring|reactor|Reactor'),
    ('dispatch: slots, lending, task spawn', r'dispatch::|spawn_local|spawn_and_run|lend'),
    ('fetch (other: pool, body, decode)', r'net::'),
    ('page (other)', r'crawl::shard::'),
    ('allocator, not attributed', r'malloc|free|realloc'),
    ('kernel, not attributed', r'^\[k\]|_raw_spin|finish_task_switch|schedule|do_syscall|entry_SYSCALL'),
]


def samples(path):
    """Each sample as [thread, leaf frame, ..., root frame]."""
    out, cur = [], None
    with open(path, errors='replace') as f:
        for line in f:
            if not line.strip():
                if cur is not None:
                    out.append(cur)
                cur = None
            elif not line.startswith((' ', '\t')):
                cur = [line.split()[0]]
            elif cur is not None:
                parts = line.strip().split(None, 1)
                sym = parts[1] if len(parts) > 1 else '?'
                cur.append(re.sub(r'\+0x[0-9a-f]+$', '', sym))
    if cur is not None:
        out.append(cur)
    return out


def stage_of(sample):
    frames = sample[1:]
    for name, pattern in STAGES:
        if callable(pattern):
            if pattern(sample):
                return name
        elif any(re.search(pattern, f) for f in frames):
            return name
    return 'other'


def main():
    all_samples = samples(sys.argv[1])
    n = len(all_samples) or 1
    counts = collections.Counter(stage_of(s) for s in all_samples)
    print(f'| stage | share of samples ({len(all_samples)}) |')
    print('|---|---:|')
    for name, _ in STAGES + [('other', None)]:
        print(f'| {name} | {100 * counts[name] / n:.1f}% |')
    show = os.environ.get('SHOW')
    if show:
        leaves, callers = collections.Counter(), collections.Counter()
        for s in all_samples:
            name = stage_of(s)
            if not name.startswith(show):
                continue
            leaves[s[1][:100] if len(s) > 1 else '?'] += 1
            callers[next((f for f in s[1:] if 'ringcrawl::' in f), '?')[:120]] += 1
        print(f'\n{show}: leaf frames')
        for k, v in leaves.most_common(12):
            print(f'{100 * v / n:5.1f}%  {k}')
        print(f'\n{show}: nearest ringcrawl frame')
        for k, v in callers.most_common(12):
            print(f'{100 * v / n:5.1f}%  {k}')


if __name__ == '__main__':
    main()
