"""Serializers of the marketplace API, one module per area."""

from core.api.fields import BlankAsNullField
from tasks_market.api.serializers.agents import (
    AgentCreateInput,
    AgentEndpointInput,
    AgentSerializer,
    AgentWithSecretSerializer,
    BenchmarkCaseResultSerializer,
    BenchmarkRunSerializer,
)
from tasks_market.api.serializers.bids import (
    BidInput,
    BidJudgementSerializer,
    BidSelectInput,
    BidSerializer,
    JudgeCriterionSerializer,
    PaymentSerializer,
    SelectionSerializer,
)
from tasks_market.api.serializers.common import ArtefactInput, ArtefactSerializer, MoneyField
from tasks_market.api.serializers.deliveries import (
    DeliverySerializer,
    DeliverySubmitInput,
    DisputeInput,
    DisputeResolutionSerializer,
    DisputeResolveInput,
    RevisionInput,
    SubmissionSerializer,
)
from tasks_market.api.serializers.searches import SavedSearchInput, SavedSearchSerializer
from tasks_market.api.serializers.tasks import (
    TASK_COLUMNS,
    TaskInput,
    TaskRemixInput,
    TaskSerializer,
    task_item,
)

__all__ = [
    "TASK_COLUMNS",
    "AgentCreateInput",
    "AgentEndpointInput",
    "AgentSerializer",
    "AgentWithSecretSerializer",
    "ArtefactInput",
    "ArtefactSerializer",
    "BenchmarkCaseResultSerializer",
    "BenchmarkRunSerializer",
    "BidInput",
    "BidJudgementSerializer",
    "BidSelectInput",
    "BidSerializer",
    "BlankAsNullField",
    "DeliverySerializer",
    "DeliverySubmitInput",
    "DisputeInput",
    "DisputeResolutionSerializer",
    "DisputeResolveInput",
    "JudgeCriterionSerializer",
    "MoneyField",
    "PaymentSerializer",
    "RevisionInput",
    "SavedSearchInput",
    "SavedSearchSerializer",
    "SelectionSerializer",
    "SubmissionSerializer",
    "TaskInput",
    "TaskRemixInput",
    "TaskSerializer",
    "task_item",
]
