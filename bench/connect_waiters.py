#!/usr/bin/env python3
"""Holds long-polls of keychaind's connect sessions open: one keep-alive connection per waiter,
each asking `GET /v1/connect/{id}?wait=SECONDS` again as soon as it is answered.

    connect_waiters.py PORT SECONDS WAIT TOKEN:ID [TOKEN:ID ...]  (each pair once per waiter)

Prints `holding N` once every waiter has sent its first request, then, after SECONDS, one line:
`answers N, statuses {...}, mean wait S s` (a wait answered at its limit took WAIT seconds: the
session stayed pending and the request was held that long).
"""
import asyncio
import sys
import time
from collections import Counter


async def waiter(port, token, session, wait, deadline, statuses, durations, started):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = (f"GET /v1/connect/{session}?wait={wait} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               f"Authorization: Bearer {token}\r\n\r\n").encode()
    first = True
    while time.monotonic() < deadline:
        sent = time.monotonic()
        writer.write(request)
        await writer.drain()
        if first:
            started.append(1)
            first = False
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await reader.readexactly(length)
        statuses[status] += 1
        durations.append(time.monotonic() - sent)
        if status == 429:
            await asyncio.sleep(1)
    writer.close()


async def main():
    port, seconds, wait = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    pairs = [pair.split(":", 1) for pair in sys.argv[4:]]
    deadline = time.monotonic() + seconds
    statuses, durations, started = Counter(), [], []
    tasks = [asyncio.create_task(waiter(port, token, session, wait, deadline, statuses, durations, started))
             for token, session in pairs]
    while len(started) < len(pairs):
        await asyncio.sleep(0.05)
    print(f"holding {len(started)}", flush=True)
    await asyncio.gather(*tasks)
    mean = sum(durations) / len(durations) if durations else 0
    print(f"answers {len(durations)}, statuses {dict(statuses)}, mean wait {mean:.1f} s", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
