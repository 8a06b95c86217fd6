"""core.http.fairness: requests run `size` at a time, in arrival order; a slot is given back around a wait on
the network, and one held for longer than `stale` stops counting, so nothing waits on it for long."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from core.http import fairness
from core.http.fairness import FairSlots, released
from core.http.outbound import DeadlineTransport


def _until(condition, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def _queue_behind(slots: FairSlots, count: int, order: list[int]) -> list[threading.Thread]:
    """`count` threads queued one after the other (each started once the one before it waits)."""
    threads = []
    for number in range(count):

        def turn(number=number):
            ticket = slots.acquire()
            order.append(number)
            slots.release(ticket)

        threads.append(threading.Thread(target=turn))
        threads[-1].start()
        _until(lambda queued=number + 1: slots.waiting() == queued)
    return threads


def test_waiting_requests_run_in_the_order_they_came():
    slots = FairSlots(1, stale=5)
    first = slots.acquire()  # the slot is taken: everyone after queues
    order: list[int] = []
    threads = _queue_behind(slots, 6, order)
    assert order == []
    slots.release(first)
    for thread in threads:
        thread.join(5)
    assert order == [0, 1, 2, 3, 4, 5]


def test_two_slots_let_two_run_at_once_and_no_third():
    slots = FairSlots(2, stale=5)
    running, most = [0], [0]
    lock = threading.Lock()

    def request():
        ticket = slots.acquire()
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        slots.release(ticket)

    threads = [threading.Thread(target=request) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert most[0] == 2


def test_a_slot_held_past_stale_no_longer_holds_the_queue():
    slots = FairSlots(1, stale=0.05)
    held = slots.acquire()  # not given back meanwhile: a slow client's body, a call outside the transports
    took = []

    def request():
        started = time.monotonic()
        slots.release(slots.acquire())
        took.append(time.monotonic() - started)

    thread = threading.Thread(target=request)
    thread.start()
    thread.join(2)
    slots.release(held)
    assert took and 0.03 < took[0] < 0.5


def test_released_gives_the_slot_to_the_next_request_while_this_one_waits():
    slots = FairSlots(1, stale=5)
    inside = threading.Event()
    order: list[str] = []

    def waits_on_the_network():
        slots.wrap(lambda environ, start_response: network())({}, None)

    def network():
        inside.set()
        with released():
            order.append("waiting")
            time.sleep(0.2)  # the provider's answer
        order.append("resumed")

    def other():
        slots.wrap(lambda environ, start_response: order.append("other ran"))({}, None)

    first = threading.Thread(target=waits_on_the_network)
    first.start()
    inside.wait(2)
    second = threading.Thread(target=other)
    second.start()
    second.join(2)
    first.join(2)
    assert order == ["waiting", "other ran", "resumed"]  # the other ran during the wait, not after it


def test_outside_a_request_released_does_nothing():
    with released():
        pass


def test_the_outbound_transport_gives_the_slot_back_during_the_call(monkeypatch):
    """A provider call through DeadlineTransport (core.http.outbound) lets the next request run meanwhile; the
    network below it is httpx's, answered here after 0.2 s."""
    slots = FairSlots(1, stale=5)
    calling, order = threading.Event(), []

    def provider(self, request):
        calling.set()
        time.sleep(0.2)
        order.append("provider answered")
        return httpx.Response(200, json={})

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", provider)
    transport = DeadlineTransport(deadline=5)

    def calls_a_provider(environ, start_response):
        return transport.handle_request(httpx.Request("GET", "https://provider.test/v1"))

    first = threading.Thread(target=slots.wrap(calls_a_provider), args=({}, None))
    first.start()
    calling.wait(2)
    second = threading.Thread(
        target=slots.wrap(lambda environ, start_response: order.append("other ran")), args=({}, None)
    )
    second.start()
    second.join(2)
    first.join(2)
    assert order == ["other ran", "provider answered"]


def test_at_least_one_slot():
    with pytest.raises(ValueError):
        FairSlots(0)


def test_a_request_back_from_a_wait_goes_before_those_that_came_after_it():
    slots = FairSlots(1, stale=5)
    order: list[str] = []
    waiting, answered = threading.Event(), threading.Event()

    def waits_on_the_network(environ, start_response):
        with released():
            waiting.set()
            answered.wait(2)  # the provider's answer comes while others are queued
        order.append("resumed")

    first = threading.Thread(target=slots.wrap(waits_on_the_network), args=({}, None))
    first.start()
    waiting.wait(2)
    holder = slots.acquire()  # the slot it gave away, taken meanwhile
    later = _queue_behind(slots, 3, order)
    answered.set()
    _until(lambda: slots.waiting() == 4)  # the resumed request queued too, at the head
    slots.release(holder)
    for thread in [first, *later]:
        thread.join(5)
    assert order == ["resumed", 0, 1, 2]


def test_a_release_wakes_only_the_one_it_hands_the_slot_to(monkeypatch):
    """20 queued requests, handed the slot one after the other: each waits once, none is woken by a release
    that was not for it (which is what a condition's notify_all did, 20 wake-ups a release)."""
    waits = []

    class CountedGate:
        def __init__(self):
            self._lock = threading.Lock()

        def acquire(self, blocking=True, timeout=-1):
            waits.append(threading.get_ident())
            return self._lock.acquire(blocking, timeout)

        def release(self):
            self._lock.release()

    class CountedWaiter(fairness._Waiter):
        def __init__(self, ticket):
            super().__init__(ticket)
            self.gate = CountedGate()
            self.gate._lock.acquire()

    monkeypatch.setattr(fairness, "_Waiter", CountedWaiter)
    slots = FairSlots(1, stale=5)
    first = slots.acquire()
    order: list[int] = []
    threads = _queue_behind(slots, 20, order)
    slots.release(first)
    for thread in threads:
        thread.join(5)
    assert order == list(range(20))
    assert len(waits) == 20  # one wait each: no wake-up that was not a hand-over
    assert slots.waiting() == 0
