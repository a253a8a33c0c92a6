use swf_runtime::{FunctionError, Value};

swf_runtime::workflow!("ui/two_functions.sw.yaml");

struct Half;

// Only one of the two functions is implemented: the trait makes that a compile error.
impl TwoFunctionsFunctions for Half {
    async fn first(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

fn main() {
    let _ = TwoFunctionsWorkflow::new(Half);
}
