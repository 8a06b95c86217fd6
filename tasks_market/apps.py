from django.apps import AppConfig


class TasksMarketConfig(AppConfig):
    name = "tasks_market"
