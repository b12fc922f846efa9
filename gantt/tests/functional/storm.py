"""Many conductors at once: a driver for contention and fault tests.

Each caller behaves as a careful conductor: a NoValidHost is an answer; a
lost reply (timeout, broker gone) is retried with the same instance uuids,
which answers with any claim the lost call made; a caller that gives up
releases its uuids so that nothing it asked for is left allocated.
"""

import concurrent.futures
import dataclasses
import threading
import time

import oslo_messaging as messaging

from gantt import exception

#: answers after which a careful conductor asks again with the same uuids
#: (ConsumerConflict: its earlier call for them, whose reply it lost, was
#: still placing them)
TRANSIENT = (messaging.MessagingTimeout, messaging.MessageDeliveryFailure,
             messaging.MessagingException, ConnectionError, OSError,
             exception.ServiceUnavailable, exception.ConsumerConflict)


@dataclasses.dataclass
class Outcome:
    placed: dict = dataclasses.field(default_factory=dict)   # uuid -> host
    no_valid_host: set = dataclasses.field(default_factory=set)
    gave_up: set = dataclasses.field(default_factory=set)
    retried_calls: int = 0
    latencies: list = dataclasses.field(default_factory=list)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def _call_with_retries(client, spec, uuids, outcome, retries, pause):
    for _attempt in range(retries + 1):
        started = time.monotonic()
        try:
            lists = client.select_destinations(None, spec, uuids)
        except exception.NoValidHost:
            with outcome.lock:
                outcome.no_valid_host.update(uuids)
            return
        except TRANSIENT:
            with outcome.lock:
                outcome.retried_calls += 1
            time.sleep(pause)
            continue
        with outcome.lock:
            outcome.latencies.append(time.monotonic() - started)
            for sels in lists:
                outcome.placed[sels[0].consumer_uuid] = sels[0].service_host
        return
    _give_up(client, uuids, outcome, retries, pause)


def _give_up(client, uuids, outcome, retries, pause):
    for uuid in uuids:
        for _attempt in range(retries + 1):
            try:
                client.release(None, uuid)
                break
            except TRANSIENT:
                time.sleep(pause)
    with outcome.lock:
        outcome.gave_up.update(uuids)


def run(client, requests, threads=16, retries=20, pause=0.5,
        during=None):
    """Send every (spec, uuids) of ``requests`` from ``threads`` callers.

    :param during: optional callable run in its own thread meanwhile (a
        fault to inject); its result is returned with the outcome
    """
    outcome = Outcome()
    fault_result = {}
    fault = None
    if during is not None:
        fault = threading.Thread(
            target=lambda: fault_result.setdefault("value", during()))
        fault.start()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(_call_with_retries, client, spec, uuids,
                               outcome, retries, pause)
                   for spec, uuids in requests]
        for future in futures:
            future.result()
    if fault is not None:
        fault.join()
    return outcome, fault_result.get("value")
