swf_runtime::workflow!("ui/missing_fields.sw.yaml");

fn main() {}
