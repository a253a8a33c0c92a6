//! The one list of diagnostic codes. Each code is stable: once published it keeps its meaning.
//! `swfc explain CODE` prints the explanation, and the README's table is checked against this list.

use serde::Serialize;

/// A stable diagnostic code such as `E0104`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Code(pub &'static str);

/// A code with its one-line title and its explanation.
#[derive(Debug, Clone, Copy)]
pub struct CodeInfo {
    pub code: Code,
    pub title: &'static str,
    pub explanation: &'static str,
}

macro_rules! codes {
    ($($name:ident = $code:literal, $title:literal, $explanation:literal;)*) => {
        impl Code {
            $(#[doc = $title] pub const $name: Code = Code($code);)*
        }
        /// Every code, in numeric order.
        pub const CODES: &[CodeInfo] = &[
            $(CodeInfo { code: Code($code), title: $title, explanation: $explanation },)*
        ];
    };
}

codes! {
    SYNTAX = "E0001", "the file is not valid YAML or JSON",
        "The file could not be read as YAML (JSON is a subset of YAML), or a scalar's YAML 1.2 core-schema tag does not allow its text (`!!int 1.5`, `!!float abc`, `!!bool yes`). Fix the syntax at the position shown.";
    UNKNOWN_KEY = "E0002", "unknown key",
        "The key is not part of the dialect's schema. Keys are matched regardless of case; when a known key is close, the message names it. `metadata` and `extensions` may hold anything.";
    WRONG_TYPE = "E0003", "value of the wrong type",
        "The schema expects another kind of value here (a string, a number, a boolean, a list or a mapping).";
    MISSING_FIELD = "E0004", "missing required field",
        "The schema requires this field for this kind of definition. Add it.";
    UNKNOWN_VALUE = "E0005", "unknown enumerated value",
        "The value must be one of the listed words (case does not matter), such as a task type, an action mode, an operator or an end kind.";
    DUPLICATE_KEY = "E0006", "key given twice",
        "The same key appears twice in one mapping (keys are compared regardless of case), or one field is given under two of its spellings (`tasks` and `states`, `nextTask` and `nextState`, a filter's `dataOutputPath` and `dataInputPath`, `n` and `numCompleted`, a switch's `dataConditions` and `conditions`). Keep one.";
    DUPLICATE_TASK = "E0101", "duplicate task name",
        "Task names must be unique inside their scope (the workflow, a parallel branch or a foreach body), because transitions name their target. Rename one of the tasks.";
    NO_START = "E0102", "no start task",
        "Every workflow and every branch needs exactly one task with a `start` definition (for example `start: {kind: default}`).";
    MANY_STARTS = "E0103", "more than one start task",
        "Only one task of a scope may declare `start`. Remove the extra `start` definitions.";
    UNKNOWN_TARGET = "E0104", "transition to a task that does not exist",
        "`nextTask` (or `nextState`) must name a task (by name or id) of the same scope. The message suggests the closest name.";
    TARGET_OUT_OF_SCOPE = "E0105", "transition out of its scope",
        "Tasks inside a parallel branch or a foreach body may only transition to tasks of the same branch or body, and tasks outside may not transition into one.";
    UNDEFINED_FUNCTION = "E0106", "functionRef to an undefined function",
        "`functionRef.refName` must name an entry of the workflow's `functions`. Define the function or fix the name.";
    UNDEFINED_EVENT = "E0107", "eventRef to an undefined event",
        "Event references (`eventRefs`, `eventRef`, `produceEvent.eventRef`) must name an entry of the workflow's `events`.";
    SWITCH_END = "E0108", "switch task declared as an end",
        "A switch task always transitions (through a condition or its `default`), so it cannot be an end task. Move the `end` to the tasks the switch leads to.";
    TRANSITION_AND_END = "E0109", "both transition and end",
        "A task either transitions to another task or ends the workflow, not both. Remove one of `transition` and `end`.";
    NO_TRANSITION_OR_END = "E0110", "neither transition nor end",
        "A task that is not a switch must either transition (`transition: {nextTask: ...}`) or end the workflow (`end: {kind: default}`).";
    BAD_DURATION = "E0111", "duration that does not parse",
        "Durations are ISO 8601 (`PT15M`, `P2DT3H4M`, `PT0.5S`). Years and months have no fixed length and are refused where a time span is needed.";
    BAD_JSONPATH = "E0112", "JSONPath that does not parse",
        "JSONPath follows the Jayway conventions (`$.a.b[0]`, `$.people[?(@.age < 40)]`, `$..name`). Fix the path at the position shown.";
    BAD_EXPRESSION = "E0113", "expression that does not parse",
        "Expressions are parsed at build time. The `spel` subset has comparisons (`eq ne lt le gt ge == != < <= > >=`), `matches`, `and or not && || !`, parentheses, literals, JSONPath operands (`$.error.name`), bare names and `#jsonPath(data, 'path')`.";
    N_TOO_LARGE = "E0114", "n_of_m needs more branches than there are",
        "With `completionType: n_of_m` (or `atLeast`), `n` (or `numCompleted`) must be at most the number of branches, or the task could never complete.";
    UNREACHABLE = "E0115", "task cannot be reached from the start",
        "No chain of transitions (including switch conditions, defaults and onError) leads from the start task to this task. Add a transition to it or remove it.";
    NO_EXIT = "E0116", "cycle from which no end can be reached",
        "Once the workflow enters these tasks it can never end: every transition leads back into the cycle. Add a condition or an onError transition that leaves it, or an end.";
    DUPLICATE_DEFINITION = "E0117", "duplicate function or event name",
        "Function and event definitions are referenced by name, so each name must be unique.";
    BAD_LANGUAGE = "E0118", "unsupported expression language",
        "Supported expression languages are `spel` (the default) and `jsonpath`. Set `language` or the workflow's `expressionLanguage` to one of them.";
    BAD_REGEX = "E0119", "regular expression that does not compile",
        "The `matches`/`notmatches` operators and the `matches` expression operator compile their pattern at build time with the `regex` crate's syntax.";
    INDEFINITE_TARGET = "E0120", "results path that is not a plain location",
        "A results path names the place where a result is written (an action's results, the event data an event filter places, the error an error filter places, a foreach's `inputParameter` and `outputCollection`), so it may contain only names and indexes (`$.a.b`, `$.list[0]`), no filters or wildcards.";
    NOT_YET_COMPILED = "E0121", "construct not compiled yet",
        "The construct parses and validates, but this version of the code generator cannot run it yet. The message names the construct.";
    BAD_INTERVAL = "E0122", "retry interval that does not parse",
        "A retry interval is an ISO 8601 duration (`PT2M`) or a repeating interval (`R5/PT15M`: at most 5 retries, 15 minutes apart).";
    NAME_CLASH = "E0123", "two names become the same Rust identifier",
        "Function names become method names of the generated trait (in snake_case). Two functions whose names differ only in case or punctuation would clash; rename one.";
    INVALID_VALUE = "E0124", "invalid value for this field",
        "The value is of the right type but not allowed here (for example a negative count, or an empty name).";
    BAD_SCHEDULE = "E0125", "schedule interval that does not parse",
        "A scheduled start's `interval` is an ISO 8601 interval: `start/end`, `start/duration`, `duration/end` (active from deployment for the duration or until the end, whichever comes first) or `duration` (active from deployment). Instants need an offset, such as `Z`.";
    UNKNOWN_WORKFLOW = "E0126", "sub-flow to a workflow that is not compiled with it",
        "A subflow task's `workflowId` must be the `id` of a workflow compiled together with this one: list both files in the same `workflow!(...)` or the same `Builder`.";
    DUPLICATE_WORKFLOW = "E0127", "two workflows with the same id",
        "Workflows compiled together are told apart by their `id`, which also names their generated types. Give each its own id.";
    SUBFLOW_CYCLE = "E0128", "sub-flows that call each other in a cycle",
        "A workflow would run itself again through its sub-flows, without end. Break the cycle.";
    MIXED_CORRELATION = "E0129", "starting events correlated by different attributes",
        "When a non-exclusive start task waits for several events, the host groups them by their correlation value, so all of them must name the same `correlationToken` (or none).";
    MIXED_DIALECT = "E0130", "keys of two draft dialects in one file",
        "Each file is written against one draft: the kebab-case drafts (`next-state`, `starts-at`), v0.1 (`startsAt`, `eventActions`, `filter`) or the tasks draft (`tasks`, `nextTask`, `eventRefs`). The file's dialect is the one most of its tell-tale keys belong to; rewrite the keys of the other dialect in its spelling, or name the dialect explicitly (`swfc --dialect`, `workflow!(dialect = \"v0.1\", ...)`, `Builder::dialect`).";
    NO_DIALECT = "E0131", "file that matches no draft dialect",
        "None of the keys that tell the drafts apart was found (`tasks`/`states`, `startsAt`, `starts-at`, `trigger-defs`, ...). Check that this is a workflow definition, or name the dialect explicitly.";
    NOT_ALLOWED_HERE = "E0132", "field this kind of state cannot have",
        "The dialect does not allow this field on this kind of state: a RELAY state performs no actions, an END state has no transition, a state that ends has no transition, a SWITCH state or switch task leaves through its conditions and `default` only, not a `transition` of its own, only an end of kind `event` has a `produceEvent`, only a start of kind `scheduled` has a `schedule`.";
    BAD_EVENT_CONDITION = "E0133", "event condition that is not over event names",
        "An event condition (v0.1 `eventActions.condition`, the kebab-case drafts' `event-expression`) combines event names with `and`, `or` and parentheses: it holds once the events it needs have arrived. Comparisons and `not` cannot be waited for.";
    BAD_COMPENSATION = "E0134", "compensatedBy that names no compensation task",
        "`compensatedBy` must name a task of the same scope marked `usedForCompensation: true`, which is not itself compensated by another task.";
    COMPENSATION_CROSSING = "E0135", "transition between normal and compensation tasks",
        "Compensation tasks run only to undo completed tasks: a normal task cannot transition to one, a compensation task can only transition to other compensation tasks, and a compensation task cannot be a start.";
    DETACHED_WAIT = "E0136", "event wait in a branch that is not waited for",
        "A branch with `waitForCompletion: false` runs on its own, with an inbox no host routes events to: a wait for events there would never end. Wait for the branch, or move the wait out of it.";
    NESTED_COMPENSATION = "E0144", "compensation asked for inside a compensation",
        "A compensation task runs while the compensation of completed tasks is under way: it cannot ask for compensation itself (`compensate: true` on its end or transitions), and it is not compensated in turn (`compensatedBy`).";
    LIMIT = "E0145", "input beyond a documented limit",
        "The compiler refuses input past its limits instead of running out of memory or time: a file of at most 16 MiB, YAML aliases that expand to at most 10,000 nodes and 16 MiB of text, nesting at most 64 levels deep, at most 10,000 tasks in one workflow, names (the id, the version, task, branch, function and event names, correlation attributes) of at most 512 bytes. Split the workflow (sub-flows), write the repeated parts out instead of through aliases, or shorten the name.";
    BAD_NUMBER = "E0146", "number that JSON data cannot hold exactly",
        "Workflow data is JSON: integers must fit in 64 bits (from -9223372036854775808 to 18446744073709551615), and floats must be finite (no `.inf`, `.nan`, or `1e400`, which is beyond the largest float). Such a number would be changed silently (to `null` or to fewer digits), so it is refused: quote it to keep it as a string.";
    CONTROL_CHARACTER = "E0147", "name that holds a control character",
        "The workflow's id and version and the names of its tasks, branches, functions and events are shown in messages, traces and histories, and the durable stores keep them as text: a control character in one (U+0000 to U+001F, U+007F to U+009F, a tab or a line break included) would be invisible or break the line there, and PostgreSQL's text cannot hold U+0000 at all. Write the name with visible characters and spaces.";
    SCHEMA_UNREADABLE = "E0150", "data schema that cannot be read",
        "`dataInputSchema` and `dataOutputSchema` name a JSON Schema file: a path relative to the workflow file, or a `file:` URI. The compiler reads it when the workflow is compiled (editing it rebuilds, as editing the workflow does) and never fetches one over a network: vendor a remote schema next to the workflow.";
    BAD_SCHEMA = "E0151", "data schema that does not compile",
        "The schema file must be a JSON Schema (JSON, or YAML) that compiles: the message gives the place in the schema file that is wrong and why. A schema's `$ref`s may only point inside it (`#/$defs/...`).";
    SCHEMAS_FEATURE = "E0152", "data schema in a build without the `schemas` feature",
        "Data schemas are validated at run time with the `jsonschema` crate, which the default build leaves out. Turn on the `schemas` feature of `swf-runtime` (for `workflow!`) or of `swf-codegen` and `swf-runtime` (for build.rs).";
    PATH_NEVER_SELECTS = "E0153", "data path that can never select anything",
        "The data schemas say the path can never select a value: a member that a closed object (`additionalProperties: false`) does not declare, a member of a value that is never an object, an index into a value that is never an array. The help names the closest declared member. How the data's shape is followed through the tasks is in the README (\"Data schemas\").";
    COMPARISON_KIND = "E0154", "comparison the data schema rules out",
        "An order (`lessthan`, `greaterthan`, ... with a number as the value, as the runtime reads it: `1e400` and `inf` are text) on a value the data schema says is only a string, or a string comparison (`Str*` operators) on one it says is only a number, cannot be what was meant: `\"999\"` compared with 1000 compares as text. Compare the value as what it is, or fix the schema.";
    NOT_A_COLLECTION = "E0155", "inputCollection that is never an array",
        "A foreach task iterates over the array its `inputCollection` selects; the data schema says the value there is never an array. Select the array.";
    IGNORED_NEXT_STATE = "W0001", "next-state on a state that ends",
        "The kebab-case schemas require `next-state` even on a state marked `end: true`. The state ends there; its `next-state` is ignored. Remove it, or remove `end: true`.";
    PATH_UNDECLARED = "W0002", "data path the schema does not declare",
        "The path reads a member that the data schema does not declare where it reads it. The schema allows other members, so the data may hold it, but a typo is likelier: the help names the closest declared member.";
    PARAMETER_NAMES_PATH = "W0003", "parameter text that names a data path",
        "A parameter string is a JSONPath only when it starts with `$`; `order.total` is passed as that text. It names a member of the data by the schema: write `$.order.total` to pass the member's value.";
    NO_TYPED_API = "W0004", "data schemas without Rust types",
        "The workflow's `dataInputSchema` and `dataOutputSchema` are turned into Rust types (by typify) for its typed entry point `run_typed`. These schemas could not be: the workflow has no `run_typed`, and its data is still validated against them.";
    SUB_FLOW_EVENT_UNDEFINED = "W0005", "sub-flow waiting for an event its caller does not define",
        "A sub-flow that the workflow waits for runs inside the workflow's instance, and a host (`Host`, `DurableHost`) routes events by the workflow's own definitions: an event the sub-flow waits for reaches it only if the calling workflow defines it the same way (name, source, type, correlationToken). Under a host no such event reaches it: its wait ends only at a timeout, and a `DurableHost` fails a wait without one. Add the definition to the calling workflow's `events`. (The plain `run`, given events through its `Io`, matches them by the sub-flow's own definitions.)";
    IGNORED_SINGLE_TIMEOUT = "W0006", "stateExecTimeout `single`, which is not applied",
        "A parallel task's `stateExecTimeout` may be written `{total: PT1M, single: PT10S}` (the later drafts' form; the stored drafts define neither member). Only `total` is applied, and it limits each attempt of the task: a retry counts it again. `single` would limit one attempt apart from the retries, which is what `total` already does here, so it is not applied. Remove it, and set `total` to the limit each attempt has.";
}

#[cfg(test)]
mod tests {
    use super::CODES;

    #[test]
    fn codes_are_unique_and_ordered() {
        for pair in CODES.windows(2) {
            assert!(
                pair[0].code.0 < pair[1].code.0,
                "{} then {}",
                pair[0].code.0,
                pair[1].code.0
            );
        }
    }

    #[test]
    fn the_readme_lists_every_code() {
        let readme = include_str!("../../../README.md");
        for info in CODES {
            let row = format!("| {} | {} |", info.code.0, info.title);
            assert!(readme.contains(&row), "README.md lacks the row `{row}`");
        }
    }
}
