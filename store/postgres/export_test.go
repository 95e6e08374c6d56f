package postgres

// ScanSettings is what PreparePeopleScan runs, for the tests.
const ScanSettings = scanSettings
