swf_runtime::workflow!("../../../../tests/ui/missing_fields.sw.yaml");

fn main() {}
