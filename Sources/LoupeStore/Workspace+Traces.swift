extension Workspace {
    /// The trace tables of this workspace (``TraceTables``): the one door to traces, spans,
    /// scores, prices and model usage, the same on SQLite and PostgreSQL.
    package var traces: TraceTables { TraceTables(self) }
}
