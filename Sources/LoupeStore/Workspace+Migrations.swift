import GRDB

extension Workspace {
    /// The schema's history. Append-only: a shipped migration is never edited, so every
    /// workspace ever written can be brought forward.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: settings and command history") { db in
            try db.create(table: "settings") { table in
                table.primaryKey("key", .text)
                table.column("value", .text).notNull()
                table.column("updated_at", .datetime).notNull()
            }
            try db.create(table: "command_history") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("line", .text).notNull()
                table.column("source", .text).notNull().check { ["tui", "repl"].contains($0) }
                table.column("ran_at", .datetime).notNull()
            }
        }
        migrator.registerMigration("v2: models") { db in
            try db.create(table: "models") { table in
                table.primaryKey("name", .text)
                table.column("directory", .text).notNull()
                table.column("weights_sha256", .text).notNull()
                table.column("parameters", .integer).notNull()
                table.column("description", .text).notNull()
                table.column("registered_at", .datetime).notNull()
            }
        }
        migrator.registerMigration("v3: kernel runs") { db in
            try db.create(table: "kernel_runs") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("suite", .text).notNull()
                table.column("kernel", .text).notNull()
                table.column("workload", .text).notNull()
                table.column("calls", .integer).notNull()
                table.column("nanoseconds", .integer).notNull()
                table.column("flops", .double).notNull()
                table.column("bytes", .double).notNull()
                table.column("threads", .integer).notNull()
                table.column("machine", .text).notNull()
                table.column("measured_at", .datetime).notNull()
            }
            try db.create(index: "kernel_runs_by_suite", on: "kernel_runs", columns: ["suite", "measured_at"])
        }
        migrator.registerMigration("v4: machine profiles and ceilings") { db in
            try db.create(table: "machine_profiles") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("machine", .text).notNull()
                table.column("cores", .integer).notNull()
                table.column("measured_at", .datetime).notNull()
                table.column("sweep_json", .text).notNull()
            }
            try db.create(table: "ceilings") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("profile_id", .integer).notNull().indexed()
                    .references("machine_profiles", onDelete: .cascade)
                table.column("kind", .text).notNull().check { ["compute", "memory"].contains($0) }
                table.column("name", .text).notNull()
                table.column("value", .double).notNull()
                table.column("provenance", .text).notNull()
            }
        }
        migrator.registerMigration("v5: GPU profiles, kernel precisions and scratch memory") { db in
            // A profile is this CPU (measured) or a GPU (datasheet or ncu peak_sustained).
            try db.alter(table: "machine_profiles") { table in
                table.add(column: "kind", .text).notNull().defaults(to: "cpu")
            }
            // Which precision a compute roof is for (FP32, FP64, FP16, TF32, BF16, FP8).
            try db.alter(table: "ceilings") { table in
                table.add(column: "precision", .text)
            }
            try db.alter(table: "kernel_runs") { table in
                table.add(column: "profile_id", .integer).references("machine_profiles", onDelete: .setNull)
                // FLOPs per precision as JSON ({"FP32": 1.2e9}) when a kernel has several.
                table.add(column: "flops_json", .text)
                table.add(column: "scratch_bytes", .integer)
                // The data its passes re-read: which memory level its traffic comes from.
                table.add(column: "footprint_bytes", .integer)
            }
        }
        migrator.registerMigration("v6: corpus, retrieval indexes, qrels and retrieval records") { db in
            // One row per ingested file: its hash decides whether a re-ingest has anything to do.
            try db.create(table: "sources") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("path", .text).notNull().unique()
                table.column("content_hash", .text).notNull()
                table.column("format", .text).notNull()
                table.column("chunker_json", .text).notNull()
                table.column("ingested_at", .datetime).notNull()
            }
            try db.create(table: "documents") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("source_id", .integer).notNull().indexed().references("sources", onDelete: .cascade)
                table.column("external_id", .text).notNull().indexed()
                table.column("title", .text).notNull()
                table.column("body", .text).notNull()
            }
            // A chunk is a byte range of its document's body, with its embedding once computed.
            try db.create(table: "chunks") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("document_id", .integer).notNull().indexed().references("documents", onDelete: .cascade)
                table.column("ordinal", .integer).notNull()
                table.column("start_byte", .integer).notNull()
                table.column("end_byte", .integer).notNull()
                table.column("text", .text).notNull()
                table.column("embedding", .blob)
                table.column("embedding_model", .text)
            }
            // Built indexes as BLOBs, keyed by kind and the corpus state they were built from.
            try db.create(table: "retrieval_indexes") { table in
                table.column("kind", .text).notNull().primaryKey()
                table.column("params_json", .text).notNull()
                table.column("corpus_stamp", .text).notNull()
                table.column("built_at", .datetime).notNull()
                table.column("data", .blob).notNull()
            }
            try db.create(table: "qrels") { table in
                table.column("source", .text).notNull()
                table.column("query_id", .text).notNull()
                table.column("document_id", .text).notNull()
                table.column("relevance", .integer).notNull()
                table.primaryKey(["source", "query_id", "document_id"])
            }
            try db.create(table: "retrieval_records") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("query", .text).notNull()
                table.column("retriever", .text).notNull()
                table.column("params_json", .text).notNull()
                table.column("hits_json", .text).notNull()
                table.column("created_at", .datetime).notNull()
            }
            try db.create(table: "retrieval_evals") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("retriever", .text).notNull()
                table.column("params_json", .text).notNull()
                table.column("queries", .text).notNull()
                table.column("qrels_source", .text).notNull()
                table.column("mean_json", .text).notNull()
                table.column("per_query_json", .text).notNull()
                table.column("created_at", .datetime).notNull()
            }
        }
        migrator.registerMigration("v7: the texts of judged queries") { db in
            // So a query typed in the Retrieval panel can be matched to its judgments.
            try db.create(table: "qrels_queries") { table in
                table.column("source", .text).notNull()
                table.column("query_id", .text).notNull()
                table.column("text", .text).notNull()
                table.primaryKey(["source", "query_id"])
            }
        }
        migrator.registerMigration("v8: traces, spans, scores and model prices") { db in
            // One row per trace with its totals, so the list needs no span reads.
            try db.create(table: "traces") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("external_id", .text).notNull()
                table.column("format", .text).notNull()
                table.column("source_file", .text)
                table.column("name", .text).notNull()
                table.column("started_ns", .integer).notNull()
                table.column("ended_ns", .integer).notNull()
                table.column("timed", .boolean).notNull()
                table.column("span_count", .integer).notNull()
                table.column("step_count", .integer).notNull()
                table.column("error_count", .integer).notNull()
                table.column("input_tokens", .integer)
                table.column("output_tokens", .integer)
                table.column("cost", .double)
                table.column("parent_trace_id", .integer).references("traces", onDelete: .setNull)
                table.column("fork_ordinal", .integer)
                table.column("metadata_json", .text).notNull()
                table.column("content_hash", .text).notNull()
                table.column("imported_at", .datetime).notNull()
                table.uniqueKey(["format", "external_id"])
            }
            // Spans carry their numbers in columns (for the tree, timeline and totals) and their
            // messages, tool call and raw source in JSON read only when a step is shown.
            try db.create(table: "spans") { table in
                table.column("trace_id", .integer).notNull().references("traces", onDelete: .cascade)
                table.column("ordinal", .integer).notNull()
                table.column("span_id", .text).notNull()
                table.column("parent_span_id", .text)
                table.column("kind", .text).notNull()
                table.column("name", .text).notNull()
                table.column("start_ns", .integer).notNull()
                table.column("end_ns", .integer)
                table.column("status", .text).notNull()
                table.column("status_message", .text)
                table.column("model", .text)
                table.column("input_tokens", .integer)
                table.column("output_tokens", .integer)
                table.column("cache_read_tokens", .integer)
                table.column("cache_write_tokens", .integer)
                table.column("reasoning_tokens", .integer)
                table.column("cost", .double)
                table.column("tool_name", .text)
                table.column("payload_json", .text).notNull()
                table.column("raw_json", .text)
                table.primaryKey(["trace_id", "ordinal"])
            }
            try db.create(table: "trace_scores") { table in
                table.column("trace_id", .integer).notNull().indexed().references("traces", onDelete: .cascade)
                table.column("scorer", .text).notNull()
                table.column("value_json", .text).notNull()
                table.column("answer", .text)
                table.column("explanation", .text)
            }
            // Dollars per million tokens; a model without a row has no price (never $0).
            try db.create(table: "model_prices") { table in
                table.primaryKey("model", .text)
                table.column("input_per_mtok", .double).notNull()
                table.column("output_per_mtok", .double).notNull()
                table.column("cached_input_per_mtok", .double)
                table.column("source", .text).notNull()
            }
        }
        migrator.registerMigration("v9: span sources stored compressed") { db in
            // A span's raw source is as large as the file it came from and read only on demand:
            // zstd keeps imports from spending their time writing it.
            try db.alter(table: "spans") { table in table.add(column: "raw_zstd", .blob) }
        }
        migrator.registerMigration("v10: eval runs, results and scores") { db in
            // A run of a suite (or an imported Inspect log): what ran, on what, by which build.
            try db.create(table: "eval_runs") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("suite", .text).notNull().indexed()
                table.column("suite_file", .text)
                table.column("suite_hash", .text).notNull()
                table.column("dataset_hash", .text).notNull()
                table.column("target_kind", .text).notNull()
                table.column("target_json", .text).notNull()
                table.column("scorers_json", .text).notNull()
                table.column("epochs", .integer).notNull()
                table.column("planned", .integer).notNull()
                table.column("status", .text).notNull()
                table.column("source", .text).notNull()
                table.column("source_key", .text)
                table.column("parent_run_id", .integer).references("eval_runs", onDelete: .setNull)
                table.column("loupe_version", .text).notNull()
                table.column("git_revision", .text)
                table.column("started_at", .datetime).notNull()
                table.column("ended_at", .datetime)
                table.column("summary_json", .text)
                table.uniqueKey(["source", "source_key"])
            }
            // One answer: an item at an epoch, with what it cost and where its evidence is.
            try db.create(table: "eval_results") { table in
                table.column("run_id", .integer).notNull().references("eval_runs", onDelete: .cascade)
                table.column("item_id", .text).notNull()
                table.column("epoch", .integer).notNull()
                table.column("input", .text).notNull()
                table.column("targets_json", .text).notNull()
                table.column("output", .text)
                table.column("error", .text)
                table.column("latency_ms", .double)
                table.column("input_tokens", .integer)
                table.column("output_tokens", .integer)
                table.column("cost", .double)
                table.column("confidence", .double)
                table.column("trace_id", .integer).references("traces", onDelete: .setNull)
                table.column("retrieval_record_id", .integer).references("retrieval_records", onDelete: .setNull)
                table.column("metadata_json", .text).notNull()
                table.column("finished_at", .datetime).notNull()
                table.primaryKey(["run_id", "item_id", "epoch"])
            }
            try db.create(table: "eval_scores") { table in
                table.column("run_id", .integer).notNull()
                table.column("item_id", .text).notNull()
                table.column("epoch", .integer).notNull()
                table.column("scorer", .text).notNull()
                table.column("value", .double).notNull()
                table.column("passed", .boolean)
                table.column("explanation", .text).notNull()
                table.column("details_json", .text)
                table.primaryKey(["run_id", "item_id", "epoch", "scorer"])
                table.foreignKey(
                    ["run_id", "item_id", "epoch"], references: "eval_results",
                    columns: ["run_id", "item_id", "epoch"],
                    onDelete: .cascade)
            }
        }
        migrator.registerMigration("v11: SAE activations, models and training logs") { db in
            // Residual-stream rows of one layer over the corpus, stored in float16 shards, with
            // where each row's token came from (its chunk and position) to show it in context.
            try db.create(table: "sae_activation_sets") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("model", .text).notNull()
                table.column("layer", .integer).notNull()
                table.column("dimensions", .integer).notNull()
                table.column("rows", .integer).notNull()
                table.column("created_at", .datetime).notNull()
            }
            try db.create(table: "sae_activation_shards") { table in
                table.column("set_id", .integer).notNull().references("sae_activation_sets", onDelete: .cascade)
                table.column("shard", .integer).notNull()
                table.column("first_row", .integer).notNull()
                table.column("rows", .integer).notNull()
                table.column("data", .blob).notNull()
                table.primaryKey(["set_id", "shard"])
            }
            try db.create(table: "sae_tokens") { table in
                table.column("set_id", .integer).notNull().references("sae_activation_sets", onDelete: .cascade)
                table.column("row", .integer).notNull()
                table.column("chunk_id", .integer).notNull()
                table.column("position", .integer).notNull()
                table.column("token", .text).notNull()
                table.primaryKey(["set_id", "row"])
            }
            // A trained (or training) SAE: its settings, the step it reached, and its parameters with
            // the optimiser's state, so a killed run resumes from the last checkpoint.
            try db.create(table: "sae_models") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("set_id", .integer).notNull().references("sae_activation_sets", onDelete: .cascade)
                table.column("layer", .integer).notNull()
                table.column("width", .integer).notNull()
                table.column("settings_json", .text).notNull()
                table.column("step", .integer).notNull()
                table.column("state", .blob).notNull()
                table.column("metrics_json", .text)
                table.column("created_at", .datetime).notNull()
                table.column("updated_at", .datetime).notNull()
            }
            try db.create(table: "sae_training_log") { table in
                table.column("model_id", .integer).notNull().references("sae_models", onDelete: .cascade)
                table.column("step", .integer).notNull()
                table.column("loss", .double).notNull()
                table.column("mse", .double).notNull()
                table.column("l0", .double).notNull()
                table.column("fvu", .double).notNull()
                table.column("dead", .double).notNull()
                table.column("learning_rate", .double).notNull()
                table.primaryKey(["model_id", "step"])
            }
            try db.create(table: "sae_feature_labels") { table in
                table.column("model_id", .integer).notNull().references("sae_models", onDelete: .cascade)
                table.column("feature", .integer).notNull()
                table.column("label", .text).notNull()
                table.primaryKey(["model_id", "feature"])
            }
        }
        migrator.registerMigration("v12: dense fraction in the SAE training log") { db in
            // Latents firing on more than 10% of a step's tokens, logged beside the dead fraction.
            try db.alter(table: "sae_training_log") { table in
                table.add(column: "dense", .double).notNull().defaults(to: 0)
            }
        }
        migrator.registerMigration("v13: leases on running jobs and complete activation sets") { db in
            // Who is running a long job (an eval run, an activation collection) right now: the
            // process and host, refreshed while it runs, so a second process can tell a live run
            // from a killed one (a dead pid on this host, or a heartbeat older than a minute).
            try db.create(table: "job_leases") { table in
                table.column("kind", .text).notNull()
                table.column("target_id", .integer).notNull()
                table.column("pid", .integer).notNull()
                table.column("host", .text).notNull()
                table.column("started_at", .datetime).notNull()
                table.column("heartbeat_at", .datetime).notNull()
                table.primaryKey(["kind", "target_id"])
            }
            // A collection states how many rows it set out to store and is marked complete in the
            // transaction that stores its last rows; sets from before this migration were complete
            // (a killed collection could not be told apart then, so they are trusted).
            try db.alter(table: "sae_activation_sets") { table in
                table.add(column: "planned_rows", .integer)
                table.add(column: "complete", .boolean).notNull().defaults(to: true)
            }
        }
        migrator.registerMigration("v14: SAE feature indexes kept with the SAE") { db in
            // Which tokens each latent fires on, over the SAE's whole activation set, at one
            // training step: encoding 100,000 tokens again on every launch took 10–14 s.
            try db.create(table: "sae_feature_indexes") { table in
                table.column("model_id", .integer).notNull().primaryKey()
                    .references("sae_models", onDelete: .cascade)
                table.column("step", .integer).notNull()
                table.column("data", .blob).notNull()
            }
        }
        migrator.registerMigration("v15: the workspace state an eval run read") { db in
            // The corpus a run's retrieval and agent targets searched (fingerprint and counts),
            // so a comparison can say when two runs did not see the same data.
            try db.alter(table: "eval_runs") { table in table.add(column: "workspace_json", .text) }
        }
        migrator.registerMigration("v16: bytes per memory level of a kernel run") { db in
            // Nsight Compute counts L1, L2 and DRAM traffic apart: a point per level.
            try db.alter(table: "kernel_runs") { table in table.add(column: "bytes_json", .text) }
        }
        migrator.registerMigration("v17: the models a trace called, kept with it") { db in
            // The trace list filters by model (`model:`); gathering them from every span at each
            // read cost a 50,000-span trace 50 ms to open.
            try db.alter(table: "traces") { table in table.add(column: "models", .text) }
            try db.execute(
                sql: """
                    UPDATE traces SET models = (
                        SELECT group_concat(model, char(31)) FROM (
                            SELECT DISTINCT model FROM spans
                            WHERE spans.trace_id = traces.id AND model IS NOT NULL ORDER BY model))
                    """)
        }
        migrator.registerMigration("v18: sessions, and traces still being received") { db in
            // A session groups turns (traces) by the session or conversation id their spans carry;
            // a received trace whose spans wait for a parent is still arriving (live).
            try db.alter(table: "traces") { table in
                table.add(column: "session_id", .text)
                table.add(column: "awaiting_parents", .integer).notNull().defaults(to: 0)
            }
            try db.create(index: "traces_session", on: "traces", columns: ["session_id"])
            // Inspect: a sample's epochs ("run/sample/epoch" less its epoch).
            try db.execute(
                sql: """
                    UPDATE traces SET session_id = rtrim(rtrim(external_id, replace(external_id, '/', '')), '/')
                    WHERE format = 'inspect' AND external_id LIKE '%/%/%'
                    """)
            // Others: the first session attribute, root spans first (as Trace.sessionID reads it).
            try db.execute(
                sql: """
                    UPDATE traces SET session_id = (
                        SELECT COALESCE(
                            json_extract(payload_json, '$.attributes."session.id"'),
                            json_extract(payload_json, '$.attributes."gen_ai.conversation.id"'),
                            json_extract(payload_json, '$.attributes."langgraph.thread_id"'),
                            json_extract(payload_json, '$.attributes."thread_id"'))
                        FROM spans WHERE spans.trace_id = traces.id AND json_valid(payload_json) AND COALESCE(
                            json_extract(payload_json, '$.attributes."session.id"'),
                            json_extract(payload_json, '$.attributes."gen_ai.conversation.id"'),
                            json_extract(payload_json, '$.attributes."langgraph.thread_id"'),
                            json_extract(payload_json, '$.attributes."thread_id"')) IS NOT NULL
                        ORDER BY parent_span_id IS NOT NULL, ordinal LIMIT 1)
                    WHERE format != 'inspect'
                    """)
        }
        migrator.registerMigration("v19: review queues, their items and labels") { db in
            // A queue: a rubric (kept as it was when the queue was made) over items drawn from the
            // workspace by a filter, in an order shuffled with a seed.
            try db.create(table: "review_queues") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("name", .text).notNull().unique()
                table.column("rubric_name", .text).notNull()
                table.column("rubric_version", .integer).notNull()
                table.column("rubric_hash", .text).notNull()
                table.column("rubric_json", .text).notNull()
                table.column("rubric_file", .text)
                table.column("target", .text).notNull()
                table.column("mode", .text).notNull()
                table.column("source", .text).notNull()
                table.column("seed", .integer).notNull()
                table.column("created_by", .text).notNull()
                table.column("created_at", .datetime).notNull()
            }
            // An item: what it points at (an answer, a trace, a step, a pair of answers), in
            // queue order. `item_key` names it in labels, exports and imports.
            try db.create(table: "review_items") { table in
                table.column("queue_id", .integer).notNull().references("review_queues", onDelete: .cascade)
                table.column("position", .integer).notNull()
                table.column("item_key", .text).notNull()
                table.column("run_id", .integer)
                table.column("eval_item_id", .text)
                table.column("epoch", .integer)
                table.column("trace_id", .integer)
                table.column("ref_json", .text).notNull()
                table.primaryKey(["queue_id", "position"])
                table.uniqueKey(["queue_id", "item_key"])
            }
            try db.create(table: "review_assignments") { table in
                table.column("queue_id", .integer).notNull().references("review_queues", onDelete: .cascade)
                table.column("item_key", .text).notNull()
                table.column("annotator", .text).notNull()
                table.primaryKey(["queue_id", "item_key", "annotator"])
            }
            // One row per (item, criterion, annotator): two people's labels on one item are both
            // kept; one person labelling again replaces their own.
            try db.create(table: "review_labels") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("queue_id", .integer).notNull().references("review_queues", onDelete: .cascade)
                table.column("item_key", .text).notNull()
                table.column("criterion", .text).notNull()
                table.column("value", .text).notNull()
                table.column("number", .double)
                table.column("annotator", .text).notNull()
                table.column("rubric_version", .integer).notNull()
                table.column("rubric_hash", .text).notNull()
                table.column("origin", .text).notNull()
                table.column("created_at", .datetime).notNull()
                table.uniqueKey(["queue_id", "item_key", "criterion", "annotator"], onConflict: .replace)
            }
            try db.create(index: "review_labels_annotator", on: "review_labels", columns: ["queue_id", "annotator"])
            try db.create(table: "review_skips") { table in
                table.column("queue_id", .integer).notNull().references("review_queues", onDelete: .cascade)
                table.column("item_key", .text).notNull()
                table.column("annotator", .text).notNull()
                table.column("skipped_at", .datetime).notNull()
                table.primaryKey(["queue_id", "item_key", "annotator"])
            }
        }
        migrator.registerMigration("v20: profiler traces (Kineto) and their events") { db in
            // One profile: a file per rank, imported together; `source_key` makes a second
            // import of the same files a no-op.
            try db.create(table: "profiler_traces") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("name", .text).notNull()
                table.column("source_key", .text).notNull().unique()
                table.column("files_json", .text).notNull()
                table.column("ranks", .integer).notNull()
                table.column("events", .integer).notNull()
                table.column("start_ns", .integer).notNull()
                table.column("end_ns", .integer).notNull()
                table.column("imported_at", .datetime).notNull()
            }
            try db.create(table: "profiler_names") { table in
                table.column("trace_id", .integer).notNull().references("profiler_traces", onDelete: .cascade)
                table.column("id", .integer).notNull()
                table.column("name", .text).notNull()
                table.primaryKey(["trace_id", "id"])
            }
            // Events by rank and time: the timeline reads a window of them, the analyses all.
            try db.create(table: "profiler_events") { table in
                table.column("trace_id", .integer).notNull().references("profiler_traces", onDelete: .cascade)
                table.column("rank", .integer).notNull()
                table.column("kind", .integer).notNull()
                table.column("name", .integer).notNull()
                table.column("category", .integer).notNull()
                table.column("start_ns", .integer).notNull()
                table.column("dur_ns", .integer).notNull()
                table.column("pid", .integer).notNull()
                table.column("tid", .integer).notNull()
                table.column("correlation", .integer)
                table.column("external_id", .integer)
                table.column("event_index", .integer).notNull()
                table.column("args", .text)
            }
            try db.create(
                index: "profiler_events_by_time", on: "profiler_events", columns: ["trace_id", "rank", "start_ns"])
        }
        migrator.registerMigration("v21: profiler timeline lanes, and each profile's report") { db in
            // Each lane's level of detail (bins over the profile's span, and the events longer
            // than a bin), so the timeline's first frame reads kilobytes, not the events; profiles
            // imported before are summarised the first time they are opened.
            try db.create(table: "profiler_lanes") { table in
                table.column("trace_id", .integer).notNull().references("profiler_traces", onDelete: .cascade)
                table.column("lane", .integer).notNull()
                table.column("rank", .integer).notNull()
                table.column("tid", .integer).notNull()
                table.column("pid", .integer).notNull()
                table.column("is_gpu", .boolean).notNull()
                table.column("events", .integer).notNull()
                table.column("start_ns", .integer).notNull()
                table.column("end_ns", .integer).notNull()
                table.column("bins", .blob).notNull()
                table.column("long_events", .blob).notNull()
                table.primaryKey(["trace_id", "lane"])
            }
            // The default report (HTA's window), kept once worked out: it reads every event.
            try db.alter(table: "profiler_traces") { table in table.add(column: "report_json", .text) }
        }
        migrator.registerMigration("v22: vector index sweeps, recall against queries per second") { db in
            // `loupe bench hnsw --record`: Loupe's HNSW and the peers measured on the same files,
            // drawn as recall/QPS curves in the Retrieval panel.
            try db.create(table: "ann_sweeps") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("workload", .text).notNull()
                table.column("engine", .text).notNull()
                table.column("version", .text)
                table.column("build_seconds", .double)
                table.column("points_json", .text).notNull()
                table.column("machine", .text).notNull()
                table.column("measured_at", .datetime).notNull()
            }
        }
        migrator.registerMigration("v23: eval work items, leased by workers") { db in
            // `eval run --workers`: each answer to make is a row that any number of `eval worker`
            // processes (on any machines sharing the workspace) lease, answer and mark done. A lease
            // is a deadline in seconds since 1970 by the database's clock; a killed worker's items
            // are leased again once it passes. The item itself travels in the row, and the suite's
            // text with the run, so a worker needs neither file.
            try db.create(table: "eval_work_items") { table in
                table.column("run_id", .integer).notNull().references("eval_runs", onDelete: .cascade)
                table.column("item_id", .text).notNull()
                table.column("epoch", .integer).notNull()
                table.column("position", .integer).notNull()
                table.column("item_json", .text).notNull()
                table.column("worker", .text)
                table.column("lease_until", .double)
                table.column("attempts", .integer).notNull().defaults(to: 0)
                table.column("done_at", .double)
                table.primaryKey(["run_id", "item_id", "epoch"])
            }
            try db.create(
                index: "eval_work_items_open", on: "eval_work_items", columns: ["run_id", "done_at", "position"])
            try db.alter(table: "eval_runs") { table in table.add(column: "suite_text", .text) }
        }
        migrator.registerMigration(TraceTables.usageMigration) { db in
            // Each trace's model calls summed per model at import, so that the Traces panel's list
            // (which prices calls by model) reads one row per trace and model instead of grouping
            // every span: on a million spans that grouping was most of the list's time. No primary
            // key: a trace's calls without a model name are one row with a NULL model.
            try db.create(table: "trace_model_usage") { table in
                table.column("trace_id", .integer).notNull().indexed().references("traces", onDelete: .cascade)
                table.column("model", .text)
                table.column("calls", .integer).notNull()
                table.column("input_tokens", .integer)
                table.column("output_tokens", .integer)
                table.column("cache_read_tokens", .integer)
                table.column("cost", .double)
                table.column("costed", .integer).notNull()
            }
            try db.execute(sql: TraceTables.usageBackfill)
        }
        migrator.registerMigration("v25: traces numbered as they change, for lists read again in part") { db in
            // A list kept up to date (the Traces panel while spans stream in) reads only the traces
            // changed since its last read. SQLite has one writer, so a counter is commit order;
            // it lives in a row of its own, since one past the largest revision would hand a
            // deleted trace's number out again. PostgreSQL's trigger stamps transaction ids
            // instead (PostgresStore.revisionStatements).
            try db.alter(table: "traces") { table in
                table.add(column: TraceTables.revisionColumn, .integer).notNull().defaults(to: 0)
            }
            try db.create(index: "traces_revision", on: "traces", columns: [TraceTables.revisionColumn])
            let clock = TraceTables.revisionClock
            let stamp = """
                UPDATE \(clock) SET last = last + 1;
                  UPDATE traces SET revision = (SELECT last FROM \(clock)) WHERE id = NEW.id;
                """
            try db.execute(
                sql: """
                    CREATE TABLE \(clock) (id INTEGER PRIMARY KEY CHECK (id = 0), last INTEGER NOT NULL);
                    INSERT INTO \(clock) (id, last) VALUES (0, 0);
                    CREATE TRIGGER traces_revision_insert AFTER INSERT ON traces BEGIN
                      \(stamp)
                    END;
                    CREATE TRIGGER traces_revision_update AFTER UPDATE ON traces WHEN NEW.revision = OLD.revision BEGIN
                      \(stamp)
                    END
                    """)
        }
        migrator.registerMigration("v26: spans found by id and by parent, for appends") { db in
            // A receiver adding a span to a trace of thousands asks where it goes: is its id
            // stored, is its parent, does a stored span wait for it. Without these each question
            // read every row of the trace, so a trace arriving a span a request cost its spans
            // squared (TraceTables.appendSpans).
            try db.create(index: "spans_by_span_id", on: "spans", columns: ["trace_id", "span_id"])
            try db.create(index: "spans_by_parent", on: "spans", columns: ["trace_id", "parent_span_id"])
        }
        migrator.registerMigration(SettingsTables.mcpSourceMigration) { db in
            // `loupe mcp --allow-writes` records each write an agent makes, and `loupe history` says
            // which door a command came through. v1 checked the source against (tui, repl), and
            // SQLite cannot change a CHECK in place: the table is made again with `mcp` allowed,
            // its rows and ids kept. PostgreSQL's tables carry no CHECK (StoreTable), so there
            // the migration is only the backfill.
            try db.create(table: "command_history_v27") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("line", .text).notNull()
                table.column("source", .text).notNull().check { ["tui", "repl", "mcp"].contains($0) }
                table.column("ran_at", .datetime).notNull()
            }
            try db.execute(
                sql: """
                    INSERT INTO command_history_v27 (id, line, source, ran_at)
                    SELECT id, line, source, ran_at FROM command_history ORDER BY id
                    """)
            try db.drop(table: "command_history")
            try db.rename(table: "command_history_v27", to: "command_history")
            try db.execute(sql: SettingsTables.mcpSourceBackfill)
        }
        migrator.registerMigration(TraceTables.recountMigration) { db in
            // Before 10ddffb a model call that a span below it records again (the Agents SDK's
            // generation span over `loupe serve`'s chat span) counted twice in its trace's tokens,
            // cost, steps and model usage, and the stored totals kept that until the trace changed.
            try TraceTables.recountNestedModelCalls(into: GRDBStatements(db: db))
        }
        return migrator
    }()

    /// The identifiers of every migration this binary knows, oldest first.
    package static var migrationIdentifiers: [String] { migrator.migrations }

    /// The schema version: how many migrations the file has applied.
    package func schemaVersion() throws(WorkspaceError) -> Int {
        try read { db in try Workspace.migrator.appliedIdentifiers(db).count }
    }
}
