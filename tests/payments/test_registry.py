from __future__ import annotations

from payments import registry


def test_the_decorator_registers_one_handler_for_several_types_and_unregister_removes_it():
    calls = []

    @registry.payment_event_handler("test.a", "test.b")
    def handler(event):
        calls.append(event.type)

    try:
        assert registry.handlers_for("test.a") == [handler]
        assert registry.handlers_for("test.b") == [handler]
        registry.register("test.a", handler)  # registering again changes nothing
        assert registry.handlers_for("test.a") == [handler]
    finally:
        registry.unregister("test.a", handler)
        registry.unregister("test.b", handler)

    assert registry.handlers_for("test.a") == []
    assert "test.a" not in registry.registered_types()


def test_several_handlers_for_one_type_run_in_registration_order():
    def first(event):
        pass

    def second(event):
        pass

    registry.register("test.c", first)
    registry.register("test.c", second)
    try:
        assert registry.handlers_for("test.c") == [first, second]
    finally:
        registry.unregister("test.c", first)
        registry.unregister("test.c", second)
