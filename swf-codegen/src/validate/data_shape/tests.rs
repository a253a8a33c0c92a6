//! Data paths checked against the data schemas.

#[cfg(feature = "schemas")]
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::source::SourceFile;

#[cfg(feature = "schemas")]
const ORDER_SCHEMA: &str = r##"{
  "type": "object",
  "properties": {
    "order": {
      "type": "object",
      "properties": {
        "total": {"type": "number"},
        "reference": {"type": "string"},
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}}
      },
      "additionalProperties": false
    },
    "customer": {
      "type": "object",
      "properties": {"name": {"type": "string"}}
    },
    "status": {"type": "string"}
  },
  "$defs": {
    "line": {"type": "object", "properties": {"sku": {"type": "string"}}, "additionalProperties": false}
  }
}"##;

/// The diagnostics of `tasks` (YAML, indented as items of `tasks:`) in a workflow whose input
/// schema is [`ORDER_SCHEMA`], as (code, line, message, help).
#[cfg(feature = "schemas")]
fn checked(tasks: &str) -> Vec<(Code, Severity, u32, String, String)> {
    let dir = tempfile::tempdir().expect("a scratch directory");
    std::fs::write(dir.path().join("order.json"), ORDER_SCHEMA).expect("writes the schema");
    let text = format!(
        "id: shapes\nname: Shapes\ndataInputSchema: order.json\nfunctions:\n  - name: f\n    resource: r\ntasks:\n{tasks}"
    );
    let source =
        SourceFile::new("shapes.sw.yaml", text).with_location(dir.path().join("shapes.sw.yaml"));
    let (_, diags) = crate::check(&source);
    diags
        .items()
        .iter()
        .map(|d: &Diagnostic| {
            (
                d.code,
                d.severity,
                d.span.line,
                d.message.clone(),
                d.help.clone().unwrap_or_default(),
            )
        })
        .collect()
}

fn operation(parameters: &str) -> String {
    format!(
        "  - name: Call\n    type: operation\n    start: {{kind: default}}\n    actions:\n      - functionRef:\n          refName: f\n          parameters:\n{parameters}\n    end: {{kind: default}}\n"
    )
}

#[cfg(feature = "schemas")]
#[test]
fn a_member_a_closed_object_does_not_declare_is_an_error_with_a_suggestion() {
    let found = checked(&operation("            total: $.order.totl"));
    assert_eq!(found.len(), 1, "{found:?}");
    let (code, severity, line, message, help) = &found[0];
    assert_eq!(
        (*code, *severity, *line),
        (Code::PATH_NEVER_SELECTS, Severity::Error, 15)
    );
    assert!(
        message.contains("`$.order.totl` can never select anything"),
        "{message}"
    );
    assert!(
        message.contains("no member `totl` in `$.order`"),
        "{message}"
    );
    assert_eq!(help, "did you mean `$.order.total`?");
}

#[cfg(feature = "schemas")]
#[test]
fn a_member_an_open_object_does_not_declare_is_a_warning() {
    let found = checked(&operation(
        "            who: $.customer.nmae\n            orders: $.orders",
    ));
    let codes: Vec<(Code, Severity)> = found.iter().map(|f| (f.0, f.1)).collect();
    assert_eq!(
        codes,
        [
            (Code::PATH_UNDECLARED, Severity::Warning),
            (Code::PATH_UNDECLARED, Severity::Warning)
        ],
        "{found:?}"
    );
    assert_eq!(found[0].4, "did you mean `$.customer.name`?");
    assert_eq!(found[1].4, "did you mean `$.order`?");
}

#[cfg(feature = "schemas")]
#[test]
fn declared_paths_array_elements_and_written_results_raise_nothing() {
    let tasks = "  - name: Call
    type: operation
    start: {kind: default}
    actions:
      - functionRef:
          refName: f
          parameters:
            total: $.order.total
            sku: $.order.lines[0].sku
            all: $..sku
        actionDataFilter:
          dataResultsPath: $.priced
      - functionRef:
          refName: f
          parameters:
            amount: $.priced.amount
    transition: {nextTask: Route}
  - name: Route
    type: switch
    dataConditions:
      - {path: $.order.total, operator: greaterthan, value: '100', transition: {nextTask: Done}}
    default: {nextTask: Done}
  - name: Done
    type: inject
    data: {}
    end: {kind: default}
";
    let found = checked(tasks);
    assert!(found.is_empty(), "{found:?}");
}

#[cfg(feature = "schemas")]
#[test]
fn a_path_into_a_value_of_another_kind_is_an_error() {
    let found = checked(&operation(
        "            x: $.order.total.cents\n            y: $.status[0]",
    ));
    let codes: Vec<Code> = found.iter().map(|f| f.0).collect();
    assert_eq!(
        codes,
        [Code::PATH_NEVER_SELECTS, Code::PATH_NEVER_SELECTS],
        "{found:?}"
    );
    assert!(
        found[0].3.contains("says `$.order.total` is a number"),
        "{}",
        found[0].3
    );
    assert!(
        found[1].3.contains("says `$.status` is a string"),
        "{}",
        found[1].3
    );
}

#[cfg(feature = "schemas")]
#[test]
fn a_parameter_that_names_a_member_without_dollar_is_a_warning() {
    let found = checked(&operation(
        "            total: order.total\n            plain: not.a.member",
    ));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].0, found[0].1),
        (Code::PARAMETER_NAMES_PATH, Severity::Warning)
    );
    assert_eq!(
        found[0].4,
        "to pass the member's value, write `$.order.total`"
    );
}

#[cfg(feature = "schemas")]
#[test]
fn a_numeric_comparison_on_a_string_is_an_error() {
    let tasks = "  - name: Route
    type: switch
    start: {kind: default}
    dataConditions:
      - {path: $.order.reference, operator: greaterthan, value: '1000', transition: {nextTask: Done}}
      - {path: $.order.total, operator: greaterthan, value: '1000', transition: {nextTask: Done}}
    default: {nextTask: Done}
  - name: Done
    type: inject
    data: {}
    end: {kind: default}
";
    let found = checked(tasks);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].2), (Code::COMPARISON_KIND, 12));
    assert!(
        found[0]
            .3
            .contains("a numeric comparison on `$.order.reference`"),
        "{}",
        found[0].3
    );
}

/// `equals` and `notequals` compare a string field with `'200'` as strings, as meant; a value
/// the runtime reads as text (`' 10'`, `inf`, `NaN`, `1e400`) makes no numeric comparison.
#[cfg(feature = "schemas")]
#[test]
fn only_an_order_with_a_value_the_runtime_reads_as_a_number_is_numeric() {
    let tasks = "  - name: Route
    type: switch
    start: {kind: default}
    dataConditions:
      - {path: $.status, operator: equals, value: '200', transition: {nextTask: Done}}
      - {path: $.status, operator: notequals, value: '200', transition: {nextTask: Done}}
      - {path: $.status, operator: greaterthan, value: ' 10', transition: {nextTask: Done}}
      - {path: $.status, operator: greaterthan, value: 'inf', transition: {nextTask: Done}}
      - {path: $.status, operator: lessthan, value: 'NaN', transition: {nextTask: Done}}
      - {path: $.status, operator: lessthan, value: '1e400', transition: {nextTask: Done}}
      - {path: $.status, operator: lessthanorequals, value: '1e3', transition: {nextTask: Done}}
    default: {nextTask: Done}
  - name: Done
    type: inject
    data: {}
    end: {kind: default}
";
    let found = checked(tasks);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].2), (Code::COMPARISON_KIND, 18));
    assert!(
        found[0].3.contains("a numeric comparison on `$.status`"),
        "{}",
        found[0].3
    );
}

#[cfg(feature = "schemas")]
#[test]
fn an_input_collection_that_is_not_an_array_is_an_error_and_elements_keep_their_shape() {
    let tasks = "  - name: Each
    type: foreach
    start: {kind: default}
    inputCollection: $.order.total
    inputParameter: $.item
    tasks:
      - name: Use
        type: operation
        start: {kind: default}
        actions:
          - functionRef:
              refName: f
              parameters: {x: $.item}
        end: {kind: default}
    transition: {nextTask: Lines}
  - name: Lines
    type: foreach
    inputCollection: $.order.lines
    inputParameter: $.line
    tasks:
      - name: Ship
        type: operation
        start: {kind: default}
        actions:
          - functionRef:
              refName: f
              parameters: {sku: $.line.skus}
        end: {kind: default}
    end: {kind: default}
";
    let found = checked(tasks);
    let codes: Vec<Code> = found.iter().map(|f| f.0).collect();
    assert!(codes.contains(&Code::NOT_A_COLLECTION), "{found:?}");
    let never = found
        .iter()
        .find(|f| f.0 == Code::PATH_NEVER_SELECTS)
        .expect("the element's shape is followed into the body");
    assert_eq!(never.4, "did you mean `$.line.sku`?");
}

#[cfg(feature = "schemas")]
#[test]
fn after_an_unknown_result_is_merged_nothing_is_assumed() {
    let tasks = "  - name: Call
    type: operation
    start: {kind: default}
    actions:
      - functionRef: {refName: f}
    transition: {nextTask: Use}
  - name: Use
    type: operation
    actions:
      - functionRef:
          refName: f
          parameters: {x: $.order.totl}
    end: {kind: default}
";
    let found = checked(tasks);
    assert!(found.is_empty(), "{found:?}");
}

/// Injected data merges into the data key by key, recursively (SEMANTICS.md): after
/// `{order: {approved: true}}`, the order still has the `total` its schema declares (the merge
/// replaced the order's shape, and reading `$.order.total` was a warning).
#[cfg(feature = "schemas")]
#[test]
fn injected_objects_merge_into_the_declared_ones() {
    let tasks = "  - name: Approve
    type: inject
    start: {kind: default}
    data: {order: {approved: true}}
    transition: {nextTask: Use}
  - name: Use
    type: operation
    actions:
      - functionRef:
          refName: f
          parameters: {total: $.order.total, approved: $.order.approved}
    end: {kind: default}
";
    let found = checked(tasks);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn without_a_schema_nothing_is_checked() {
    let text = "id: plain\nname: Plain\nfunctions:\n  - name: f\n    resource: r\ntasks:\n"
        .to_owned()
        + &operation("            total: $.order.totl\n            x: order.total");
    let (_, diags) = crate::check(&SourceFile::new("plain.sw.yaml", text));
    assert!(diags.items().is_empty(), "{:?}", diags.items());
}

/// A recursive schema is read once more inside itself, then nothing is assumed: expanded to
/// the depth limit, three references to itself made 3^16 objects (the build hung).
#[cfg(feature = "schemas")]
#[test]
fn a_recursive_schema_is_read_in_bounded_time() {
    use super::shape::{Lookup, Shape};
    use crate::ir::PathSegment;

    let schema = serde_json::json!({
        "$ref": "#/$defs/person",
        "$defs": {"person": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "mother": {"$ref": "#/$defs/person"},
                "father": {"$ref": "#/$defs/person"},
                "spouse": {"$ref": "#/$defs/person"}
            },
            "additionalProperties": false
        }}
    });
    let shape = Shape::from_schema(&schema);
    let path = |keys: &[&str]| -> Vec<PathSegment> {
        keys.iter()
            .map(|key| PathSegment::Key((*key).to_owned()))
            .collect()
    };
    assert!(matches!(
        shape.lookup(&path(&["mother", "nmae"])),
        Lookup::Never { depth: 1, .. }
    ));
    assert!(matches!(
        shape.lookup(&path(&["father", "name"])),
        Lookup::Found(_)
    ));
    assert!(matches!(
        shape.lookup(&path(&["mother", "spouse", "father", "nmae"])),
        Lookup::Unknown
    ));
}

/// `items` after `prefixItems` describes only the elements after the tuple's: `$.pair[0].name`
/// reads the first, an object, which `items` (numbers) would have called a false E0153.
#[cfg(feature = "schemas")]
#[test]
fn the_elements_of_a_tuple_are_not_read_as_its_rest() {
    use super::shape::{Lookup, Shape};
    use crate::ir::PathSegment;

    let schema = serde_json::json!({
        "type": "object",
        "properties": {"pair": {
            "type": "array",
            "prefixItems": [{"type": "object", "properties": {"name": {"type": "string"}}}],
            "items": {"type": "number"}
        }}
    });
    let shape = Shape::from_schema(&schema);
    let path = [
        PathSegment::Key(String::from("pair")),
        PathSegment::Index(0),
        PathSegment::Key(String::from("name")),
    ];
    assert!(matches!(shape.lookup(&path), Lookup::Unknown));
}
