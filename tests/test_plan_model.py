"""The plan object (SPEC §4): validation with errors by field path, step order, markdown."""

from __future__ import annotations

import copy
import json
import re

import pytest
from pydantic import ValidationError

from server.plan.markdown import render, status_line
from server.plan.model import Plan, PlanInvalid, next_step, parse_plan, step_order, undone


def step(id, depends_on=(), **more):
    return {"id": id, "description": f"do {id}", "verification": f"check {id}", "depends_on": list(depends_on), **more}


def plan_data(**more):
    """A valid plan: s1 ← s2 ← s3."""
    return {
        "summary": "Add a setting",
        "approach": "Read it where the others are read",
        "steps": [step("s1"), step("s2", ["s1"]), step("s3", ["s2"])],
        **more,
    }


def problems_of(value) -> list[str]:
    with pytest.raises(PlanInvalid) as caught:
        parse_plan(value)
    return caught.value.problems


# ---------------------------------------------------------------- validation, one rule a row


def drop(key):
    return lambda p: p.pop(key)


def put(key, value):
    return lambda p: p.__setitem__(key, value)


def in_step(i, key, value=...):
    def change(p):
        if value is ...:
            p["steps"][i].pop(key)
        else:
            p["steps"][i][key] = value

    return change


@pytest.mark.parametrize(
    "change, expected",
    [
        (drop("approach"), "approach: required"),
        (put("approach", "   "), "approach: must not be empty"),
        (put("approach", None), "approach: required"),
        (put("approach", 7), "approach: must be a string (got 7)"),
        (put("summary", ["a"]), "summary: must be a string (got a list)"),
        (drop("steps"), "steps: required"),
        (put("steps", []), "steps: must list at least one step"),
        (put("steps", "do it all"), 'steps: must be a list (got "do it all")'),
        (put("steps", [step(f"s{i}") for i in range(101)]), "steps: at most 100 items (got 101)"),
        (lambda p: p["steps"].__setitem__(1, "s2"), 'steps[1]: must be an object (got "s2")'),
        (in_step(1, "description"), "steps[1].description: required"),
        (in_step(0, "description", " "), "steps[0].description: must not be empty"),
        (in_step(2, "verification"), "steps[2].verification: required (how to check the step: a command to run, a test)"),
        # (s2 depends on s1: while steps[0] has no usable id, that is not reported as unknown)
        (in_step(0, "id"), "steps[0].id: required"),
        (in_step(0, "id", ""), 'steps[0].id: must be a non-empty string or an integer (got "")'),
        (in_step(0, "id", 1.5), "steps[0].id: must be a non-empty string or an integer (got 1.5)"),
        (in_step(0, "id", True), "steps[0].id: must be a non-empty string or an integer (got true)"),
        (in_step(0, "files", "a.py"), 'steps[0].files: must be a list (got "a.py")'),
        (in_step(0, "files", ["a.py", 3]), "steps[0].files[1]: must be a string (got 3)"),
        (in_step(1, "depends_on", "s1"), 'steps[1].depends_on: must be a list (got "s1")'),
        (in_step(1, "depends_on", [{"id": "s1"}]), "steps[1].depends_on[0]: must be a non-empty string or an integer (got an object)"),
        (in_step(2, "depends_on", ["s9"]), 'steps[2].depends_on: names unknown step "s9"'),
        (lambda p: p["steps"].__setitem__(2, step("s1")), 'steps[2].id: duplicate id "s1" (also steps[0])'),
        (in_step(0, "depends_on", ["s1"]), 'steps[0].depends_on: step "s1" depends on itself'),
        (in_step(0, "depends_on", ["s3"]), "steps: depends_on has a cycle: s1 → s3 → s2 → s1"),
        (put("estimated_complexity", "huge"), 'estimated_complexity: must be small, medium or large (got "huge")'),
        (put("estimated_complexity", 2), "estimated_complexity: must be small, medium or large (got 2)"),
        (put("alternatives_considered", "none"), 'alternatives_considered: must be a list (got "none")'),
        (put("risks", [{"risk": "slow", "mitigation": "cache"}]), "risks[0]: must be a string (got an object)"),
        (put("files_to_create", "a.py"), 'files_to_create: must be a list (got "a.py")'),
        (put("files_to_modify", [None]), "files_to_modify[0]: must be a string (got null)"),
        (put("tests_to_write", {"a": 1}), "tests_to_write: must be a list (got an object)"),
    ],
)
def test_each_rule_names_the_field(change, expected):
    data = plan_data()
    change(data)
    assert problems_of(data) == [expected]


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "plan: required"),
        ('{"approach": "a",', "plan: not valid JSON (Expecting property name enclosed in double quotes at line 1, column 18)"),
        ("[1, 2]", "plan: must be an object or a JSON string of one (got a list)"),
        ('"a plan"', 'plan: must be an object or a JSON string of one (got "a plan")'),
        (5, "plan: must be an object or a JSON string of one (got 5)"),
        ([plan_data()], "plan: must be an object or a JSON string of one (got a list)"),
    ],
)
def test_the_plan_itself_must_be_an_object(value, expected):
    assert problems_of(value) == [expected]


def test_every_problem_is_listed_at_once_and_the_model_is_told_what_to_do():
    data = plan_data(estimated_complexity="huge")
    del data["approach"]
    del data["steps"][1]["description"]  # a field error in a step...
    data["steps"][2]["depends_on"] = ["s9"]  # ...does not hide the step graph's problems
    with pytest.raises(PlanInvalid) as caught:
        parse_plan(data)
    assert str(caught.value) == (
        "The plan is invalid:\n"
        "- approach: required\n"
        "- steps[1].description: required\n"
        '- estimated_complexity: must be small, medium or large (got "huge")\n'
        '- steps[2].depends_on: names unknown step "s9"\n'
        "Fix these and call plan_exit again with the whole corrected plan."
    )
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "steps, expected",
    [
        ([step("a", ["b"]), step("b", ["a"])], ["steps: depends_on has a cycle: a → b → a"]),
        ([step("a", ["b"]), step("b", ["c"]), step("c", ["a"])], ["steps: depends_on has a cycle: a → b → c → a"]),
        ([step("a"), step("b", ["c"]), step("c", ["b"]), step("d", ["c"])], ["steps: depends_on has a cycle: b → c → b"]),
        # a step waiting on a cycle leads to it: only the cycle is reported
        ([step("d", ["a"]), step("a", ["b"]), step("b", ["a"])], ["steps: depends_on has a cycle: a → b → a"]),
        (
            [step("a", ["b"]), step("b", ["a"]), step("c", ["d"]), step("d", ["c", "a"])],
            ["steps: depends_on has a cycle: a → b → a", "steps: depends_on has a cycle: c → d → c"],
        ),
        ([step("a", ["a"])], ['steps[0].depends_on: step "a" depends on itself']),
        ([step(1, [2]), step(2, [1])], ["steps: depends_on has a cycle: 1 → 2 → 1"]),
    ],
)
def test_cycles_are_reported_with_their_path(steps, expected):
    assert problems_of(plan_data(steps=steps)) == expected


# ---------------------------------------------------------------- what is accepted


def test_a_json_string_is_read_like_the_object():
    assert parse_plan(json.dumps(plan_data())) == parse_plan(plan_data())


def test_integer_ids_become_strings():
    plan = parse_plan(plan_data(steps=[step(1), step(2, [1]), step("3", [2, "1"])]))
    assert [s.id for s in plan.steps] == ["1", "2", "3"]
    assert [s.depends_on for s in plan.steps] == [[], ["1"], ["2", "1"]]
    assert plan.step(2) is plan.steps[1] and plan.step("2") is plan.steps[1]
    assert plan.step(9) is None


def test_lenient_where_nothing_is_lost():
    data = plan_data(
        estimated_complexity=" Medium ",
        extra_field="ignored",
        risks=None,  # null counts as left out
        approach="  trimmed \n",
    )
    data["steps"][0]["owner"] = "ignored too"
    data["steps"][2]["depends_on"] = ["s2", "s1", "s2"]
    plan = parse_plan(data)
    assert plan.estimated_complexity == "medium"
    assert plan.risks == []
    assert plan.approach == "trimmed"
    assert plan.steps[2].depends_on == ["s2", "s1"]
    assert "extra_field" not in plan.model_dump() and "owner" not in plan.model_dump()["steps"][0]


def test_optional_fields_have_defaults():
    plan = parse_plan({"approach": "a", "steps": [{"id": "s1", "description": "d", "verification": "v"}]})
    assert plan.summary == "" and plan.estimated_complexity is None
    assert plan.alternatives_considered == plan.risks == plan.files_to_create == plan.files_to_modify == plan.tests_to_write == []
    assert plan.steps[0].files == plan.steps[0].depends_on == []


def test_stored_json_reads_back_and_a_plan_is_valid_by_construction():
    plan = parse_plan(plan_data(estimated_complexity="small", risks=["r"], files_to_create=["a.py"]))
    stored = json.loads(json.dumps(plan.model_dump(mode="json")))
    assert Plan.model_validate(stored) == plan
    broken = copy.deepcopy(stored)
    broken["steps"][0]["depends_on"] = ["s3"]
    with pytest.raises(ValidationError, match="cycle"):
        Plan.model_validate(broken)


# ---------------------------------------------------------------- step order and progress


def ordered_plan(*steps):
    return parse_plan(plan_data(steps=list(steps)))


@pytest.mark.parametrize(
    "steps, order",
    [
        ([step("s1"), step("s2", ["s1"]), step("s3", ["s2"])], ["s1", "s2", "s3"]),
        ([step("s3", ["s2"]), step("s2", ["s1"]), step("s1")], ["s1", "s2", "s3"]),
        ([step("b"), step("a"), step("c")], ["b", "a", "c"]),  # no dependencies: the plan's order
        ([step("x", ["z"]), step("y"), step("z")], ["y", "z", "x"]),
        ([step("a"), step("b", ["d"]), step("c"), step("d")], ["a", "c", "d", "b"]),
    ],
)
def test_step_order_respects_dependencies_and_keeps_the_plans_order(steps, order):
    assert step_order(ordered_plan(*steps)) == order


@pytest.mark.parametrize(
    "completed, expected_next, expected_undone",
    [
        ([], "a", ["a", "b", "c", "d"]),
        (["a"], "b", ["b", "c", "d"]),
        (["b"], "a", ["a", "c", "d"]),  # c waits on a too
        (["a", "b"], "c", ["c", "d"]),
        (["a", "b", "c"], "d", ["d"]),
        (["a", "b", "c", "d"], None, []),
        ({"a": "ok", "b": "ok"}, "c", ["c", "d"]),  # the dict of verification outputs works as is
        (["a", "nosuch"], "b", ["b", "c", "d"]),
    ],
)
def test_next_step_and_undone(completed, expected_next, expected_undone):
    plan = ordered_plan(step("a"), step("b"), step("c", ["a", "b"]), step("d", ["c"]))
    assert next_step(plan, completed) == expected_next
    assert undone(plan, completed) == expected_undone


def test_integer_ids_in_progress():
    plan = ordered_plan(step(1), step(2, [1]))
    assert next_step(plan, [1]) == "2"
    assert undone(plan, [1]) == ["2"]


# ---------------------------------------------------------------- markdown


@pytest.mark.parametrize(
    "state, completed, current, line",
    [
        ("planning", [], None, "Status: drafting"),
        ("awaiting_approval", [], None, "Status: pending approval"),
        ("executing", [], None, "Status: approved"),
        ("executing", [], "s1", "Status: approved"),
        ("executing", ["s1"], None, "Status: step 2 of 3"),
        ("executing", {"s1": "ok", "s2": "ok"}, None, "Status: step 3 of 3"),
        ("executing", ["s1"], "s3", "Status: step 3 of 3"),
        ("executing", ["s1", "s2", "s3"], None, "Status: all 3 steps done"),
        ("completed", ["s1", "s2", "s3"], None, "Status: completed"),
        ("rejected", [], None, "Status: rejected"),
    ],
)
def test_the_status_line_follows_the_state(state, completed, current, line):
    plan = parse_plan(plan_data())
    assert status_line(plan, state, completed, current) == line
    doc = render(plan, plan_id="p1", goal="Add a setting", state=state, completed=completed, current=current)
    assert doc.splitlines()[2] == line


def test_unknown_state_or_current_step_is_refused():
    plan = parse_plan(plan_data())
    with pytest.raises(ValueError, match="state: must be one of planning, awaiting_approval, executing, completed, rejected"):
        render(plan, plan_id="p1", goal="g", state="normal")
    with pytest.raises(ValueError, match="current: no step 's9'"):
        render(plan, plan_id="p1", goal="g", state="executing", completed=["s1"], current="s9")


def test_the_whole_document():
    plan = parse_plan(
        {
            "summary": "Dark mode for the settings page.",
            "approach": "CSS variables.\nA switch toggles them.",
            "alternatives_considered": ["Two stylesheets"],
            "steps": [
                {"id": 1, "description": "Define the variables", "files": ["theme.css"], "verification": "npm test"},
                {"id": 2, "description": "Add the toggle", "files": ["Settings.tsx", "App.tsx"], "depends_on": [1], "verification": "npm test -- settings"},
                {"id": 3, "description": "Document it", "depends_on": [2], "verification": "read README"},
            ],
            "risks": ["Low contrast somewhere"],
            "files_to_create": ["theme.css"],
            "files_to_modify": ["Settings.tsx", "App.tsx"],
            "tests_to_write": ["the toggle persists"],
            "estimated_complexity": "medium",
        }
    )
    doc = render(plan, plan_id="p-7", goal="Dark\nmode", state="executing", completed={"1": "5 passed\n"})
    assert doc == (
        "# Plan: Dark mode\n"
        "\n"
        "Status: step 2 of 3\n"
        "\n"
        "Plan id: p-7 · Estimated complexity: medium\n"
        "\n"
        "## Summary\n"
        "\n"
        "Dark mode for the settings page.\n"
        "\n"
        "## Approach\n"
        "\n"
        "CSS variables.\n"
        "A switch toggles them.\n"
        "\n"
        "## Alternatives considered\n"
        "\n"
        "- Two stylesheets\n"
        "\n"
        "## Steps\n"
        "\n"
        "- [x] 1. Define the variables\n"
        "  - Files: `theme.css`\n"
        "  - Verification: npm test\n"
        "  - Result:\n"
        "    ```text\n"
        "    5 passed\n"
        "    ```\n"
        "- [ ] 2. Add the toggle (current)\n"
        "  - Files: `Settings.tsx`, `App.tsx`\n"
        "  - Depends on: 1\n"
        "  - Verification: npm test -- settings\n"
        "- [ ] 3. Document it\n"
        "  - Depends on: 2\n"
        "  - Verification: read README\n"
        "\n"
        "## Risks\n"
        "\n"
        "- Low contrast somewhere\n"
        "\n"
        "## Files to create\n"
        "\n"
        "- `theme.css`\n"
        "\n"
        "## Files to modify\n"
        "\n"
        "- `Settings.tsx`\n"
        "- `App.tsx`\n"
        "\n"
        "## Tests to write\n"
        "\n"
        "- the toggle persists\n"
    )
    assert render(plan, plan_id="p-7", goal="Dark\nmode", state="executing", completed={"1": "5 passed\n"}) == doc


def test_empty_sections_are_left_out_and_an_outcome_is_shown():
    plan = parse_plan({"approach": "a", "steps": [step("s1")]})
    doc = render(plan, plan_id="p1", goal="g", state="completed", completed=["s1"], outcome="All done.\nNo deviations.")
    assert doc == (
        "# Plan: g\n\nStatus: completed\n\nPlan id: p1\n\n"
        "## Outcome\n\nAll done.\nNo deviations.\n\n"
        "## Approach\n\na\n\n"
        "## Steps\n\n- [x] s1. do s1\n  - Verification: check s1\n"
    )


def fenced_blocks(doc: str) -> list[tuple[str, list[str]]]:
    """(fence, body lines) of each fenced block, closed as CommonMark closes it: by a line of at
    least as many backticks and nothing else."""
    blocks, lines, i = [], doc.splitlines(), 0
    while i < len(lines):
        opening = re.fullmatch(r"\s*(`{3,})text", lines[i])
        i += 1
        if not opening:
            continue
        fence, body = opening.group(1), []
        while i < len(lines) and not re.fullmatch(r"\s*`{%d,}\s*" % len(fence), lines[i]):
            body.append(lines[i])
            i += 1
        blocks.append((fence, body))
        i += 1
    return blocks


@pytest.mark.parametrize(
    "output, fence",
    [
        ("ok", "```"),
        ("```\nnot the end\n```", "````"),
        ("x ``````` y\n````", "````````"),
        ("  indented\n\nafter a blank line", "```"),
    ],
)
def test_verification_output_cannot_break_out_of_its_fence(output, fence):
    plan = parse_plan(plan_data())
    doc = render(plan, plan_id="p1", goal="g", state="executing", completed={"s1": output, "s2": "fine"})
    (first_fence, body), (_, second) = fenced_blocks(doc)
    assert first_fence == fence
    assert [line.removeprefix("    ") for line in body] == output.splitlines()
    assert second == ["    fine"]
    assert "- [ ] s3. do s3 (current)" in doc  # the document goes on after the block


def test_completed_without_outputs_and_empty_output():
    plan = parse_plan(plan_data())
    doc = render(plan, plan_id="p1", goal="g", state="executing", completed=["s1"])
    assert "- [x] s1. do s1\n  - Verification: check s1\n- [ ] s2" in doc
    doc = render(plan, plan_id="p1", goal="g", state="executing", completed={"s1": "  \n"})
    assert "  - Result: (no output)\n" in doc


def test_multiline_texts_stay_in_their_list_item_and_odd_file_names_stay_code():
    data = plan_data(risks=["slow\nif the cache is cold"])
    data["steps"][0].update(description="First line\n\nSecond paragraph", files=["we`ird.py", "`tick"])
    doc = render(parse_plan(data), plan_id="p1", goal="g", state="planning")
    assert "- [ ] s1. do s1" not in doc
    assert "- [ ] s1. First line\n\n  Second paragraph\n  - Files: ``we`ird.py``, `` `tick ``\n" in doc
    assert "- slow\n  if the cache is cold\n" in doc
    assert "(current)" not in doc  # only while executing
