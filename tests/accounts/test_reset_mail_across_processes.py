"""One reset mail per account per PASSWORD_RESET_MAIL_INTERVAL_SECONDS holds across processes: the mark is a
`cache.add` in the shared cache (Redis), not a memory of one Celery child
(docs/decisions.md#identity-and-authentication). Two forked processes, as two prefork children of a
worker or two worker nodes, run the task at once."""

from __future__ import annotations

import multiprocessing

import pytest
from django.core import mail
from django.db import connections

from accounts.tasks import password_reset_mail
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)  # the children read the committed user

CHILDREN = 2


def _child(start: multiprocessing.synchronize.Barrier, mailed: multiprocessing.Queue) -> None:
    mail.outbox = []
    start.wait(timeout=30)
    password_reset_mail("alice@example.com")
    mailed.put(len(mail.outbox))


def test_two_processes_mail_one_reset_between_them():
    UserFactory(email="alice@example.com")
    connections.close_all()  # each child opens its own connection
    fork = multiprocessing.get_context("fork")
    start, mailed = fork.Barrier(CHILDREN), fork.Queue()
    children = [fork.Process(target=_child, args=(start, mailed)) for _ in range(CHILDREN)]
    for child in children:
        child.start()
    counts = [mailed.get(timeout=60) for _ in children]
    for child in children:
        child.join(timeout=30)

    assert [child.exitcode for child in children] == [0] * CHILDREN
    assert sorted(counts) == [0, 1]
