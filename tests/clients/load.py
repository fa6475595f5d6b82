"""Load for `cargo xtask load`: synthetic memories for a store, then concurrent retrievals
against `arbor serve --http` on loopback, with latency percentiles. Standard library only, so
the client adds as little as it can to what is measured.

  python tests/clients/load.py memories --count 2000 --arbor target/release/arbor --root STORE
  python tests/clients/load.py retrieve --requests 200 --concurrency 200 --addr 127.0.0.1:PORT

With `--tenants N` (memories) the store is an operator's: N tenants get a token each (written to
`--tokens FILE`) and the memories are spread over their stores, each marked with its tenant;
`retrieve --tokens FILE` then asks as every tenant in turn and counts any answer holding another
tenant's mark.
"""

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

PEOPLE = ["Dana", "Priya", "Marco", "Lena", "Tomas", "Aiko", "Sam", "Noor", "Elif", "Jonas"]
PROJECTS = ["Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Fjord", "Garnet", "Harbor"]
FACTS = [
    "{p} prefers {x} meetings on {d}.",
    "{p} is leading the {q} rollout this quarter.",
    "Project {q} moved its launch to {d}.",
    "{p} asked for weekly notes about {q} every {d}.",
    "The {q} staging cluster runs in {c}.",
    "{p} will be on leave until {d}.",
    "We decided to ship {q} behind a feature flag.",
    "{p} owns the {q} database migration.",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
CITIES = ["Frankfurt", "Lisbon", "Dublin", "Oslo", "Warsaw"]
QUESTIONS = [
    "who leads the {q} rollout?",
    "when is the {q} launch?",
    "where does the {q} staging cluster run?",
    "what does {p} prefer for meetings?",
    "when is {p} back from leave?",
    "who owns the {q} migration?",
]


SCOPE = ["--conversation", "quickstart", "--project", "lumen-platform"]
TENANT_MARK = re.compile(rb"tenant (t[0-9]+)\)")


def fill(arbor, root, count, rng, mark=""):
    lines = []
    for i in range(count):
        text = rng.choice(FACTS).format(
            p=rng.choice(PEOPLE), q=rng.choice(PROJECTS), d=rng.choice(DAYS), c=rng.choice(CITIES),
            x=rng.choice(["morning", "afternoon", "short", "walking"]),
        )
        lines.append(json.dumps({"text": f"{text} (note {i}{mark})", "source": {"type": "message", "message_id": f"load-{i}"}}))
    subprocess.run(
        [arbor, "--root", root, "ingest", *SCOPE], input="\n".join(lines) + "\n", text=True,
        check=True, stdout=subprocess.DEVNULL,
    )
    subprocess.run([arbor, "--root", root, "jobs", "run"], check=True, stdout=subprocess.DEVNULL)


def memories(args):
    rng = random.Random(7)
    if not args.tenants:
        fill(args.arbor, args.root, args.count, rng)
        print(f"ingested {args.count} memories")
        return
    tokens = {}
    for t in range(args.tenants):
        name = f"t{t}"
        issued = subprocess.run(
            [args.arbor, "--root", args.root, "--json", "tokens", "create", "--tenant", name, *SCOPE],
            check=True, capture_output=True, text=True,
        )
        tokens[name] = json.loads(issued.stdout)["token"]
        fill(args.arbor, os.path.join(args.root, "tenants", name), args.count // args.tenants, rng, f", tenant {name}")
    with open(args.tokens, "w") as out:
        json.dump(tokens, out)
    print(f"ingested {args.count} memories over {args.tenants} tenants")


async def one_request(host, port, body, tenant=None, token=None):
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    request = (
        f"POST /api/v1/memory/retrieve HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"{auth}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    writer.write(request)
    await writer.drain()
    response = await reader.read()
    writer.close()
    elapsed = time.perf_counter() - started
    status_line = response.split(b"\r\n", 1)[0].decode(errors="replace")
    status = int(status_line.split()[1]) if len(status_line.split()) > 1 else 0
    payload = response.split(b"\r\n\r\n", 1)[-1]
    ok = status == 200 and b'"evidence"' in payload
    crossed = {mark.decode() for mark in TENANT_MARK.findall(payload)} - {tenant} if tenant else set()
    if crossed:
        ok = f"tenant {tenant} read {sorted(crossed)}"
    return elapsed, status, ok


async def retrieve(args):
    host, port = args.addr.rsplit(":", 1)
    rng = random.Random(11)
    bodies = [
        json.dumps({"query": rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), q=rng.choice(PROJECTS))}).encode()
        for _ in range(args.requests)
    ]
    gate = asyncio.Semaphore(args.concurrency)
    tokens = sorted(json.load(open(args.tokens)).items()) if args.tokens else [(None, None)]

    async def gated(i, body):
        tenant, token = tokens[i % len(tokens)]
        async with gate:
            try:
                return await one_request(host, int(port), body, tenant, token)
            except OSError as error:
                return 0.0, 0, f"{type(error).__name__}: {error}"

    started = time.perf_counter()
    results = await asyncio.gather(*(gated(i, b) for i, b in enumerate(bodies)))
    wall = time.perf_counter() - started
    errors = [r for r in results if r[2] is not True]
    # Percentiles of the answered requests only; errors are counted, not timed.
    latencies = sorted(r[0] * 1000 for r in results if r[2] is True) or [0.0]
    cuts = statistics.quantiles(latencies * 2 if len(latencies) < 2 else latencies, n=100, method="inclusive")
    crossings = sum(1 for r in results if isinstance(r[2], str) and " read " in r[2])
    over = f" from {len(tokens)} tenants ({crossings} answers held another tenant's memory)" if args.tokens else ""
    print(
        f"{args.requests} retrievals{over}, {args.concurrency} in flight: {len(errors)} errors; "
        f"{args.requests / wall:.0f} req/s over {wall:.2f} s"
    )
    print(f"latency ms: p50 {cuts[49]:.1f}, p95 {cuts[94]:.1f}, p99 {cuts[98]:.1f}, max {latencies[-1]:.1f}")
    if errors:
        print(f"first errors: {errors[:3]}", file=sys.stderr)
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    filling = commands.add_parser("memories")
    filling.add_argument("--count", type=int, default=2000)
    filling.add_argument("--arbor", required=True)
    filling.add_argument("--root", required=True)
    filling.add_argument("--tenants", type=int, default=0)
    filling.add_argument("--tokens", help="where to write the tenants' tokens (with --tenants)")
    load = commands.add_parser("retrieve")
    load.add_argument("--requests", type=int, default=200)
    load.add_argument("--concurrency", type=int, default=200)
    load.add_argument("--addr", required=True)
    load.add_argument("--tokens", help="ask as the tenants in this file, in turn")
    args = parser.parse_args()
    if args.command == "memories":
        memories(args)
    else:
        asyncio.run(retrieve(args))


if __name__ == "__main__":
    main()
