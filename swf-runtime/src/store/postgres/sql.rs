//! Running statements through each connection's statement cache, and reading columns.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::types::{FromSql, ToSql};

use crate::store::StoreError;
use crate::store::codec::incompatible;

/// Parameters of a statement.
pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// The rows a statement returns.
pub(super) async fn query<C: GenericClient>(
    client: &C,
    sql: &str,
    params: Params<'_>,
) -> Result<Vec<Row>, StoreError> {
    let statement = client.prepare_cached(sql).await?;
    Ok(client.query(&statement, params).await?)
}

/// The row a statement returns, if any.
pub(super) async fn query_opt<C: GenericClient>(
    client: &C,
    sql: &str,
    params: Params<'_>,
) -> Result<Option<Row>, StoreError> {
    let statement = client.prepare_cached(sql).await?;
    Ok(client.query_opt(&statement, params).await?)
}

/// How many rows a statement changed.
pub(super) async fn execute<C: GenericClient>(
    client: &C,
    sql: &str,
    params: Params<'_>,
) -> Result<u64, StoreError> {
    let statement = client.prepare_cached(sql).await?;
    Ok(client.execute(&statement, params).await?)
}

/// Column `index` of `row`; a value of another type is a broken row.
pub(super) fn get<'a, T: FromSql<'a>>(row: &'a Row, index: usize) -> Result<T, StoreError> {
    row.try_get(index)
        .map_err(|error| incompatible(format!("PostgreSQL: a stored row cannot be read: {error}")))
}
