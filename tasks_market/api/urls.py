from django.urls import path

from tasks_market.api.views import agents, bids, deliveries, receipts, reputation, tasks

urlpatterns = [
    path("agents", agents.AgentListView.as_view(), name="agents"),
    path("agents/<uid:agent_id>", agents.AgentDetailView.as_view(), name="agent-detail"),
    path("agents/<uid:agent_id>/endpoint", agents.AgentEndpointView.as_view(), name="agent-endpoint"),
    path("agents/<uid:agent_id>/rotate-secret", agents.AgentRotateSecretView.as_view(), name="agent-rotate-secret"),
    path("agents/<uid:agent_id>/benchmark", agents.AgentBenchmarkView.as_view(), name="agent-benchmark"),
    path("agents/<uid:agent_id>/benchmarks", agents.AgentBenchmarksView.as_view(), name="agent-benchmarks"),
    path("agents/<uid:agent_id>/reputation", reputation.AgentReputationView.as_view(), name="agent-reputation"),
    path("agents/<uid:agent_id>/reviews", reputation.AgentReviewsView.as_view(), name="agent-reviews"),
    path("agents/<uid:agent_id>/searches", agents.AgentSearchesView.as_view(), name="agent-searches"),
    path("agents/<uid:agent_id>/searches/<uid:search_id>", agents.AgentSearchView.as_view(), name="agent-search"),
    path("tasks", tasks.TaskListView.as_view(), name="tasks"),
    path("tasks/<uid:task_id>", tasks.TaskDetailView.as_view(), name="task-detail"),
    path("tasks/<uid:task_id>/cancel", tasks.TaskCancelView.as_view(), name="task-cancel"),
    path("tasks/<uid:task_id>/remix", tasks.TaskRemixView.as_view(), name="task-remix"),
    path("tasks/<uid:task_id>/receipt", receipts.TaskReceiptView.as_view(), name="task-receipt"),
    path("tasks/<uid:task_id>/review", reputation.TaskReviewView.as_view(), name="task-review"),
    path("tasks/<uid:task_id>/review/reply", reputation.TaskReviewReplyView.as_view(), name="task-review-reply"),
    path("tasks/<uid:task_id>/bids", bids.BidListView.as_view(), name="task-bids"),
    path("tasks/<uid:task_id>/bids/<uid:bid_id>/select", bids.BidSelectView.as_view(), name="bid-select"),
    path("tasks/<uid:task_id>/bids/<uid:bid_id>/withdraw", bids.BidWithdrawView.as_view(), name="bid-withdraw"),
    path("tasks/<uid:task_id>/bids/<uid:bid_id>/artefacts", bids.BidArtefactsView.as_view(), name="bid-artefacts"),
    path("tasks/<uid:task_id>/bids/<uid:bid_id>/judge", bids.BidJudgeView.as_view(), name="bid-judge"),
    path("tasks/<uid:task_id>/delivery", deliveries.DeliveryView.as_view(), name="task-delivery"),
    path("tasks/<uid:task_id>/delivery/retry", deliveries.DeliveryRetryView.as_view(), name="delivery-retry"),
    path("tasks/<uid:task_id>/delivery/approve", deliveries.DeliveryApproveView.as_view(), name="delivery-approve"),
    path("tasks/<uid:task_id>/delivery/dispute", deliveries.DeliveryDisputeView.as_view(), name="delivery-dispute"),
    path(
        "tasks/<uid:task_id>/delivery/request-revision",
        deliveries.DeliveryRevisionView.as_view(),
        name="delivery-request-revision",
    ),
    # Staff only, so outside /api/v1/tasks, where API keys are accepted (docs/decisions.md#identity-and-authentication).
    path("disputes/<uid:task_id>/resolve", deliveries.DisputeResolveView.as_view(), name="dispute-resolve"),
]
