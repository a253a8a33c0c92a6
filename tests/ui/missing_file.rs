swf_runtime::workflow!("ui/does_not_exist.sw.yaml");

// The placeholder types of the file that cannot be read: code using them adds no errors.
struct Nothing;

impl DoesNotExistFunctions for Nothing {}

fn main() {
    let _ = DoesNotExistWorkflow::new(Nothing);
}
