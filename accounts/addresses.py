"""E-mail addresses: kept as given, mailed with an IDNA 2008 domain, compared by one key
(docs/decisions.md#identity-and-authentication).

- `User.email` is the address as the user gave it (surrounding blanks cut): what `GET /auth/me` shows.
- `mailing_address()` is where mail goes: that local part, and the domain as IDNA 2008 A-labels
  (`Ann@Faß.de` → `Ann@xn--fa-hia.de`). Django's own encoding of a non-ASCII domain is IDNA 2003, which maps
  `ß` to `ss` and so would mail `fass.de`, another registrable domain; an ASCII domain it leaves alone.
- `normalise_email()` is the key an address is unique and looked up by (`User.email_key`): the local part
  in Unicode NFKC, casefolded; the domain mapped by UTS #46 (non-transitional, so `ß` stays `ß`) and
  encoded as IDNA 2008 A-labels, which are lower case. So `ANN@FAß.DE`, `ann@faß.de` and
  `ann@xn--fa-hia.de` are one account, and `ann@fass.de` is another.
"""

from __future__ import annotations

import unicodedata

import idna


def _domain_ascii(domain: str) -> str | None:
    """The domain as IDNA 2008 A-labels (lower case), or None when IDNA 2008 does not allow it."""
    try:
        return idna.encode(domain.removesuffix("."), uts46=True).decode("ascii")
    except UnicodeError:  # idna.IDNAError: a code point, a label or the length that IDNA 2008 refuses
        return None


def _casefold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def normalise_email(email: str) -> str:
    """The key of an address: unique among accounts, compared exactly at every lookup.

    A domain IDNA 2008 refuses (registration refuses it, see `domain_problem`) is casefolded like the
    local part, so such an address still has one key, which no valid domain's A-labels can equal.
    """
    email = (email or "").strip()
    local, at, domain = email.rpartition("@")
    if not at:
        return _casefold(email)
    return f"{_casefold(local)}@{_domain_ascii(domain) or _casefold(domain)}"


def mailing_address(email: str) -> str:
    """Where mail to this address goes: the local part as given, the domain as IDNA 2008 A-labels."""
    email = (email or "").strip()
    local, at, domain = email.rpartition("@")
    ascii_domain = _domain_ascii(domain) if at else None
    return f"{local}@{ascii_domain}" if ascii_domain else email


def domain_problem(email: str) -> str | None:
    """Why the address's domain cannot be mailed (a sentence), or None when IDNA 2008 allows it."""
    _local, at, domain = (email or "").strip().rpartition("@")
    if at and _domain_ascii(domain) is not None:
        return None
    return "The domain is not a valid internationalised domain name (IDNA 2008)."
