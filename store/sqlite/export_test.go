package sqlite

// RowidRange is the query that bounds a scan's parts, for the tests.
const RowidRange = rowidRange
