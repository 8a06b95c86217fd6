from __future__ import annotations

import unicodedata
import uuid

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower
from django.utils import timezone

from accounts.addresses import domain_problem, mailing_address, normalise_email


class UserManager(BaseUserManager):
    def with_address(self, email: str) -> models.QuerySet[User]:
        """The account an address names, by its key (accounts.addresses.normalise_email), first. A row without
        a key (inserted by the release before during a rolling deploy, or left keyless by migration 0006) is
        matched by the spelling that release stored: the whole address in NFKC, casefolded."""
        legacy = unicodedata.normalize("NFKC", (email or "").strip()).casefold()
        matching = Q(email_key=normalise_email(email)) | Q(email_key__isnull=True, email=legacy)
        return self.filter(matching).order_by(F("email_key").asc(nulls_last=True), "date_joined")

    def create_user(self, email: str, password: str | None = None, **extra) -> User:
        if not email:
            raise ValueError("An e-mail address is required.")
        user = self.model(email=email.strip(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)

    def get_by_natural_key(self, email: str) -> User:
        user = self.with_address(email).first()
        if user is None:
            raise self.model.DoesNotExist(f"No user has the address {email!r}.")
        return user


class User(AbstractBaseUser, PermissionsMixin):
    """A person who logs in by e-mail. Their credits, which pay for image generation, are `assistant`'s
    (assistant.models.CreditBalance)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The address as given, and the key it is unique and looked up by (accounts.addresses). The key is null
    # only on a row the release before inserted during a rolling deploy (UserManager.with_address).
    email = models.EmailField(unique=True)
    # Null, not "": unique, and NULLs are distinct.
    email_key = models.CharField(max_length=1000, unique=True, null=True, editable=False)  # noqa: DJ001
    # When the address was proven: a mailed verification token came back, or a reset mailed to it was
    # completed (docs/decisions.md#identity-and-authentication). Null: unverified; changing the address
    # clears it. `signup_grant_pending`: SIGNUP_CREDITS are due on the first verification, once.
    email_verified_at = models.DateTimeField(null=True, blank=True, editable=False)
    signup_grant_pending = models.BooleanField(default=False, db_default=False, editable=False)
    is_staff = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)
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
        # The key is the identity; the case-insensitive constraint on the address as given stays while a
        # release that stored no key can still be running (a rolling deploy), so its inserts race safely too.
        constraints = [models.UniqueConstraint(Lower("email"), name="unique_user_email_ci")]
        # The admin change list (docs/decisions.md#admin-change-lists-at-size).
        indexes = [models.Index(fields=["-date_joined", "-id"], name="user_joined_desc")]

    def __str__(self) -> str:
        return self.email

    @property
    def email_verified(self) -> bool:
        return self.email_verified_at is not None

    @property
    def mailing_address(self) -> str:
        """Where mail to the user goes (the domain in IDNA 2008 A-labels)."""
        return mailing_address(self.email)

    def clean(self) -> None:
        super().clean()
        self.email = (self.email or "").strip()
        problem = domain_problem(self.email)
        if problem:
            raise ValidationError({"email": problem})
        if User.objects.with_address(self.email).exclude(pk=self.pk).exists():
            raise ValidationError({"email": "A user with this e-mail address already exists."})

    def save(self, *args, **kwargs) -> None:
        # Every way in (the admin, the shell, a fixture) stores the key that lookups compare.
        self.email = (self.email or "").strip()
        self.email_key = normalise_email(self.email)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "email" in update_fields:
            kwargs["update_fields"] = {*update_fields, "email_key"}
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
