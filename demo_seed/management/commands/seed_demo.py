"""`manage.py seed_demo [--scale N]`: a realistic demo data set, through the domain services.

At every scale the demo user (demo@example.com, staff, as `make run` creates it) owns the showcase
brand "Northwind Outdoor", whose competitors roster holds 2,000 discovered competitors (400 of them
with the brand's own edits: starred, noted, removed) and 500 names in its brand kits (150 of them
other spellings of discovered names). Around it, per unit of scale: 8 users with two brands and a kit
each, a team on a paid subscription, a bidding agent, 25 open tasks with bids, assistant
conversations, and a few scraping snapshots.

Idempotent: every part is counted first and only what is missing is created, so running it again at
the same scale adds nothing, and a larger scale adds the difference. Users it creates get the demo password:
the one `make run` generated (settings.DEMO_USER_PASSWORD), else a random one printed at the end (users from
an earlier run keep theirs). A progress bar on stdout shows how far it got.
"""

from __future__ import annotations

import random
import secrets
import sys
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.utils import timezone

from accounts.management.commands.ensure_demo_user import DEMO_EMAIL, demo_staff_join
from accounts.models import User
from accounts.services import user_create
from assistant.models import AssistantMessage
from assistant.services import assistant_message_send
from brands.domain.matching import normalize_name
from brands.models import Brand, BrandCompetitor, BrandKit, CompetitorOrigin, CompetitorSeed
from brands.selectors.competitors import seed_row_id
from brands.selectors.roster_cache import roster_changed, shared_competitors_changed
from brands.services.brands import brand_create, brand_kit_create
from scrapers.models import Snapshot
from scrapers.services import snapshot_trigger
from tasks_market.models import Agent, Task, TaskCategory
from tasks_market.services.agents import agent_register
from tasks_market.services.bids import bid_create
from tasks_market.services.posting import task_create
from teams.models import Team, TeamType, Tier
from teams.services import team_hire

SHOWCASE_BRAND = "Northwind Outdoor"
SHOWCASE_DOMAIN = "northwind-outdoor.example"
DISCOVERED = 2000
KIT_NAMES = 500
KIT_VARIANTS = 150
USERS_PER_SCALE = 8
TASKS_PER_SCALE = 25
SNAPSHOTS = 5
SEED_BATCH = 250  # competitor seeds per transaction, and per step of the progress bar

_SYLLABLES = ["ka", "lo", "mi", "ra", "ven", "tor", "ex", "ix", "ul", "an", "sor", "bel", "cor", "dan", "fi"]
_SYLLABLES += ["gra", "hel", "jo", "lum", "nar", "os", "pe", "qui", "sta", "tri", "vo", "zen"]
_WORDS = ["Running", "Outdoor", "Labs", "Studio", "Goods", "Athletics", "Supply", "Works", "Collective", ""]
_SUFFIXES = ["", "", "", " Inc.", " LLC", " Ltd", " GmbH", " Corp"]
_TASKS = [
    ("Write three launch emails for {p}", TaskCategory.CONTENT),
    ("Design a carousel ad set for {p}", TaskCategory.DESIGN),
    ("Research the top ten competitors of {p}", TaskCategory.RESEARCH),
    ("Build a landing page A/B test for {p}", TaskCategory.DEVELOPMENT),
    ("Clean and dedupe the {p} customer list", TaskCategory.DATA),
    ("Plan a two-week paid social campaign for {p}", TaskCategory.MARKETING),
]
_QUESTIONS = [
    "What should our next campaign focus on?",
    "Draft a tagline for our autumn collection.",
    "Which channels bring us the cheapest conversions?",
    "Summarise what our competitors advertised this month.",
]


class Progress:
    """A one-line text progress bar, redrawn in place with a carriage return."""

    WIDTH = 30

    def __init__(self, stream, total: int):
        self.stream, self.total, self.done, self.shown = stream, max(total, 1), 0, ""

    def advance(self, label: str, n: int = 1) -> None:
        self.done = min(self.total, self.done + n)
        filled = self.WIDTH * self.done // self.total
        line = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {100 * self.done // self.total:3d}% {label:<24.24}"
        if line != self.shown:  # redraw only when something visible changed
            self.stream.write("\r" + line, ending="")
            self.stream.flush()
            self.shown = line

    def finish(self) -> None:
        self.advance("done", self.total)
        self.stream.write("")


def company_name(rnd: random.Random) -> str:
    core = "".join(rnd.choice(_SYLLABLES) for _ in range(rnd.randint(2, 3))).capitalize()
    return f"{core} {rnd.choice(_WORDS)}".strip() + rnd.choice(_SUFFIXES)


def spelling_variant(name: str, rnd: random.Random) -> str:
    base = name
    for suffix in (" Inc.", " LLC", " Ltd", " GmbH", " Corp"):
        base = base.removesuffix(suffix)
    return rnd.choice([f"The {base}", base.upper(), f"{base}, Inc.", base.lower().replace(" ", "-") + ".com"])


class Command(BaseCommand):
    help = "Seed a realistic demo data set (idempotent; --scale multiplies everything but the showcase roster)."

    def add_arguments(self, parser):
        parser.add_argument("--scale", type=int, default=1, help="1 = 8 users, 25 open tasks, ... (default 1)")

    def handle(self, *args, scale: int, **options):
        if scale < 1:
            self.stderr.write("--scale must be at least 1")
            sys.exit(2)
        self.rnd = random.Random(20261121 * scale)  # noqa: S311 (reproducible demo data, not secrets)
        self.password = getattr(settings, "DEMO_USER_PASSWORD", "") or secrets.token_urlsafe(18)
        n_users = USERS_PER_SCALE * scale
        n_tasks = TASKS_PER_SCALE * scale
        total = 1 + n_users + DISCOVERED // SEED_BATCH + 2 + 4 * (n_users + 1) + n_users + n_tasks + SNAPSHOTS
        self.progress = Progress(self.stdout, total)

        demo = self.demo_user()
        users = [demo, *self.users(n_users)]
        self.showcase(demo)
        for user in users:
            self.brands_and_kit(user)
            self.team(user)
            self.conversation(user, exchanges=3 if user is demo else 1)
        agents = self.agents(users[1:])
        self.tasks(users, agents, n_tasks)
        self.snapshots(demo)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # fresh tables get statistics now, not when autovacuum comes by
        self.progress.finish()
        self.stdout.write(
            f"Seeded scale {scale}: {User.objects.count()} users, {Brand.objects.count()} brands, "
            f"{CompetitorSeed.objects.count()} competitor seeds, {Team.objects.count()} teams, "
            f"{Agent.objects.count()} agents, {Task.objects.count()} tasks. Log in as {DEMO_EMAIL} / {self.password}."
        )

    # --- People ----------------------------------------------------------------------------------------

    def demo_user(self) -> User:
        user = User.objects.filter(email__iexact=DEMO_EMAIL).first()
        if user is None:  # the same user `manage.py ensure_demo_user` creates, without issuing a key
            user = user_create(
                email=DEMO_EMAIL, password=self.password, is_staff=True, credits=100, email_verified=True
            )
            demo_staff_join(user)
        self.progress.advance("demo user")
        return user

    def users(self, count: int) -> list[User]:
        users = []
        for i in range(count):
            email = f"user{i + 1:04d}@demo.example.com"
            user = User.objects.filter(email=email).first() or user_create(
                email=email, password=self.password, credits=50, email_verified=True
            )
            users.append(user)
            self.progress.advance("users")
        return users

    # --- Brands, kits and the showcase roster ----------------------------------------------------------

    def showcase(self, owner: User) -> None:
        brand = Brand.objects.filter(owner=owner, name=SHOWCASE_BRAND).first() or brand_create(
            owner=owner,
            data={
                "name": SHOWCASE_BRAND,
                "website_url": f"https://{SHOWCASE_DOMAIN}/",
                "industry": "sports_outdoors",
                "country": "US",
                "description": "Outdoor apparel and running gear, sold online.",
            },
        )
        rnd = random.Random(7)  # noqa: S311 - the same roster at every scale
        names: dict[str, str] = {}
        while len(names) < DISCOVERED + KIT_NAMES - KIT_VARIANTS:
            name = company_name(rnd)
            names.setdefault(normalize_name(name), name)
        keys = list(names)
        discovered, fresh = keys[:DISCOVERED], keys[DISCOVERED:]
        existing = set(CompetitorSeed.objects.filter(target_domain=brand.domain).values_list("name_key", flat=True))
        missing = [key for key in discovered if key not in existing]
        self.progress.advance("competitors (existing)", (DISCOVERED - len(missing)) // SEED_BATCH)
        for start in range(0, len(missing), SEED_BATCH):
            batch = missing[start : start + SEED_BATCH]
            with transaction.atomic():
                shared_competitors_changed()  # bulk writes send no signals: the cached roster goes stale
                roster_changed(brand.id)
                seeds = CompetitorSeed.objects.bulk_create([self._seed(brand, names[key], rnd) for key in batch])
                BrandCompetitor.objects.bulk_create(
                    [
                        BrandCompetitor(
                            id=seed_row_id(brand.id, seed.id),
                            brand=brand,
                            seed=seed,
                            name=seed.name,
                            is_starred=i % 4 == 0,
                            removed=i % 10 == 9,
                            notes="Watch their pricing." if i % 3 == 0 else "",
                            edited_fields=["notes"] if i % 3 == 0 else [],
                        )
                        for i, seed in enumerate(seeds)
                        if (start + i) % 5 == 0  # one in five gets the brand's own copy
                    ]
                )
            self.progress.advance("competitors")
        kit_names = [names[key] for key in fresh] + [spelling_variant(names[k], rnd) for k in discovered[:KIT_VARIANTS]]
        for kit_name, chunk in (("Main kit", kit_names[:300]), ("Campaign kit", kit_names[300:])):
            if not BrandKit.objects.filter(brand=brand, name=kit_name).exists():
                brand_kit_create(owner=owner, brand_id=brand.id, data={"name": kit_name, "competitor_names": chunk})
            self.progress.advance("brand kits")

    def _seed(self, brand: Brand, name: str, rnd: random.Random) -> CompetitorSeed:
        slug = normalize_name(name).replace(" ", "-")
        return CompetitorSeed(
            name=name,
            name_key=normalize_name(name),
            discovered_by=CompetitorOrigin.DEMO,
            target_domain=brand.domain,
            canonical_domain=f"{slug}.example",
            website_url=f"https://{slug}.example/",
            description=f"{name} competes on {rnd.randint(3, 90)} shared keywords.",
            industry=rnd.choice(["apparel_fashion", "sports_outdoors", "footwear"]),
            country=rnd.choice(["US", "GB", "DE", "FR"]),
            social_links={"instagram": f"https://instagram.com/{slug}"},
            analysis_data={"keyword_overlap": round(rnd.random(), 3)},
            active_paid_media_platforms=rnd.sample(["meta", "google", "tiktok", "linkedin"], k=2),
        )

    def brands_and_kit(self, owner: User) -> None:
        for index in range(2):
            name = f"{owner.email.split('@')[0].capitalize()} Brand {index + 1}"
            brand = Brand.objects.filter(owner=owner, name=name).first()
            if brand is None:
                slug = name.lower().replace(" ", "-")
                brand = brand_create(
                    owner=owner,
                    data={"name": name, "website_url": f"https://{slug}.example/", "industry": "apparel_fashion"},
                )
            if index == 0 and not brand.kits.exists():
                competitors = [company_name(self.rnd) for _ in range(5)]
                brand_kit_create(
                    owner=owner,
                    brand_id=brand.id,
                    data={"name": "Brand kit", "competitor_names": competitors, "colors": ["#0B3D2E", "#F2A900"]},
                )
            self.progress.advance("brands")

    # --- Teams, agents, tasks and bids ---------------------------------------------------------------------

    def team(self, owner: User) -> None:
        if not Team.objects.filter(owner=owner).exists():
            team_type = self.rnd.choice(TeamType.values)
            team_hire(
                owner=owner,
                team_type=team_type,
                display_name=f"{team_type.replace('_', ' ').title()} team",
                tier=self.rnd.choice(Tier.values),
            )
        self.progress.advance("teams")

    def agents(self, owners: list[User]) -> list[Agent]:
        agents = []
        for owner in owners:
            agent = Agent.objects.filter(owner=owner).first() or agent_register(
                owner=owner,
                name=f"{owner.email.split('@')[0]}-agent",
                endpoint_url=f"https://agents.demo.example.com/{owner.pk}",
                description="Writes, designs and researches on demand.",
                capabilities=self.rnd.sample(TaskCategory.values, k=2),
            )
            agents.append(agent)
            self.progress.advance("agents")
        return agents

    def tasks(self, posters: list[User], agents: list[Agent], count: int) -> None:
        existing = Task.objects.filter(poster__in=posters).count()
        self.progress.advance("tasks (existing)", min(existing, count))
        for i in range(existing, count):
            poster = posters[i % len(posters)]
            title, category = _TASKS[i % len(_TASKS)]
            task = task_create(
                poster=poster,
                title=title.format(p=f"{poster.email.split('@')[0]}'s brand"),
                description="Deliverables as files; the brand kit is attached to the task.",
                budget_amount=Decimal(self.rnd.choice([150, 300, 450, 800, 1200])),
                budget_currency="usd",
                deadline=timezone.now() + timedelta(days=self.rnd.randint(3, 30)),
                category=category,
                requirements=["Use the brand kit", "Deliver editable sources"],
            )
            bidders = [agent for agent in agents if agent.owner_id != poster.pk]
            for agent in self.rnd.sample(bidders, k=min(len(bidders), self.rnd.randint(0, 3))):
                bid_create(
                    user=agent.owner,
                    task_id=task.id,
                    agent_id=agent.id,
                    amount=task.budget_amount * Decimal("0.9"),
                    currency="usd",
                    proposal=f"{agent.name} can deliver this in two rounds of revisions.",
                    eta_hours=self.rnd.choice([24, 48, 72]),
                )
            self.progress.advance("tasks and bids")

    # --- Assistant and scraping --------------------------------------------------------------------------

    def conversation(self, user: User, *, exchanges: int) -> None:
        if not AssistantMessage.objects.filter(assistant__user=user).exists():
            for question in self.rnd.sample(_QUESTIONS, k=exchanges):
                assistant_message_send(user=user, content=question)
        self.progress.advance("assistant")

    def snapshots(self, staff: User) -> None:
        for _ in range(Snapshot.objects.count(), SNAPSHOTS):
            # The demo site itself: a loopback URL, fetched only where OUTBOUND_ALLOW_PRIVATE_URLS allows it.
            snapshot_trigger(user=staff, dataset_id="pages", inputs=[{"url": "https://127.0.0.1:8443/docs"}])
        self.progress.advance("snapshots", SNAPSHOTS)
