"""Views of a Plan for people: ``explain`` (aligned table, verdict, reason, deviations) and
``compare`` (every rule side by side)."""
