from __future__ import annotations

import unicodedata
import uuid

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone


def normalise_email(email: str) -> str:
    """The one spelling of an address: NFKC, then casefolded (see docs/decisions.md#identity-and-authentication).

    Registration stores it and every lookup compares it exactly, so a long s (U+017F) is an "s" and a dotless i
    (U+0131) is not an "i", whatever the database's UPPER() would say.
    """
    return unicodedata.normalize("NFKC", (email or "").strip()).casefold()


class UserManager(BaseUserManager):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **extra) -> User:
        if not email:
            raise ValueError("An e-mail address is required.")
        user = self.model(email=normalise_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)

    def get_by_natural_key(self, email: str) -> User:
        return self.get(email=normalise_email(email))


class User(AbstractBaseUser, PermissionsMixin):
    """A person who logs in by e-mail. `credits` pay for image generation."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    email = models.EmailField(unique=True)
    is_staff = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)
    credits = models.PositiveIntegerField(default=0)
    date_joined = models.DateTimeField(default=timezone.now)
    # Password reset (docs/decisions.md#identity-and-authentication): each mailed token hashes the serial,
    # so mailing a new one makes the older ones worthless; `password_reset_at` is the last completed reset.
    # db_default: during a rolling deploy the release before inserts users without this column.
    password_reset_serial = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    password_reset_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    class Meta:
        ordering = ["-date_joined"]
        constraints = [models.UniqueConstraint(Lower("email"), name="unique_user_email_ci")]
        # The admin change list (docs/decisions.md#admin-change-lists-at-size).
        indexes = [models.Index(fields=["-date_joined", "-id"], name="user_joined_desc")]

    def __str__(self) -> str:
        return self.email

    def clean(self) -> None:
        super().clean()
        self.email = normalise_email(self.email)

    def save(self, *args, **kwargs) -> None:
        # Every way in (the admin, the shell, a fixture) stores the one spelling that lookups compare.
        self.email = normalise_email(self.email)
        super().save(*args, **kwargs)


class ApiKeyQuerySet(models.QuerySet):
    def active(self):
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A programmatic credential `bmk_<prefix>_<secret>`. Only the prefix and a SHA-256 are stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=8, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.name} (bmk_{self.prefix}_…)"
