-- A session database at schema version 3, written by the v3 SQLite store and Recorder through
-- strata.Session (sqlite3 .dump): session "compacted" = four prompts, one loop each, run with
-- --compact --compact-tldr (a tiny policy: chunks of 2 messages, 2 kept live) in layout panels, so
-- its later requests carried detached chunks whose long messages showed model-written tl;drs —
-- which version 3 did not store; session "stopped" = a first prompt that before_turn aborted, so
-- the session has no loop. .dump omits user_version, so it is set here.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	title      TEXT NOT NULL DEFAULT '',
	cwd        TEXT NOT NULL DEFAULT '',
	agent_file TEXT NOT NULL DEFAULT '',
	provider   TEXT NOT NULL DEFAULT '',
	model      TEXT NOT NULL DEFAULT '',
	layout     TEXT NOT NULL DEFAULT ''
);
INSERT INTO sessions VALUES('9956dc3394e35bb1',1795678219285,1795678219333,'compacted','/work/a','','anthropic','replay','panels');
INSERT INTO sessions VALUES('40f0d825401e543a',1795678219335,1795678219335,'stopped','/work/a','','anthropic','replay','panels');
CREATE TABLE loops (
	id                 TEXT PRIMARY KEY,
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	parent_loop_id     TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_loop TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_turn INTEGER,
	trigger            TEXT NOT NULL,
	created_at         INTEGER NOT NULL
, previous_loop_id TEXT REFERENCES loops(id) ON DELETE SET NULL);
INSERT INTO loops VALUES('f03237e35b99ee90','9956dc3394e35bb1',NULL,NULL,NULL,'user',1795678219296,NULL);
INSERT INTO loops VALUES('41a7b3c01c5efe50','9956dc3394e35bb1',NULL,NULL,NULL,'user',1795678219309,'f03237e35b99ee90');
INSERT INTO loops VALUES('84192254cdf9d47f','9956dc3394e35bb1',NULL,NULL,NULL,'user',1795678219314,'41a7b3c01c5efe50');
INSERT INTO loops VALUES('ed0913ba5c3167d1','9956dc3394e35bb1',NULL,NULL,NULL,'user',1795678219326,'84192254cdf9d47f');
CREATE TABLE turns (
	loop_id            TEXT NOT NULL REFERENCES loops(id) ON DELETE CASCADE,
	turn_index         INTEGER NOT NULL,
	triggered_by       TEXT NOT NULL,
	correlation_id     TEXT NOT NULL DEFAULT '',
	status             TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
	stop_reason        TEXT NOT NULL DEFAULT '',
	error              TEXT NOT NULL DEFAULT '',
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	total_tokens       INTEGER NOT NULL DEFAULT 0,
	started_at         INTEGER NOT NULL,
	ended_at           INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (loop_id, turn_index)
);
INSERT INTO turns VALUES('f03237e35b99ee90',0,'user','b69a1367c04100d5','completed','end_turn','',100,10,0,0,0,110,1795678219296,1795678219306);
INSERT INTO turns VALUES('41a7b3c01c5efe50',0,'user','30570e8adca1ac57','completed','end_turn','',100,10,0,0,0,110,1795678219309,1795678219313);
INSERT INTO turns VALUES('84192254cdf9d47f',0,'user','38f64c783e501eaa','completed','end_turn','',300,30,0,0,0,330,1795678219314,1795678219325);
INSERT INTO turns VALUES('ed0913ba5c3167d1',0,'user','073b7cbabf40fd77','completed','end_turn','',300,30,0,0,0,330,1795678219326,1795678219333);
CREATE TABLE messages (
	loop_id    TEXT NOT NULL REFERENCES loops(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	part       INTEGER NOT NULL,
	turn_index INTEGER NOT NULL,
	role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
	kind       TEXT NOT NULL CHECK (kind IN ('input', 'output', 'tool_results')),
	content    TEXT NOT NULL,
	PRIMARY KEY (loop_id, seq, part)
);
INSERT INTO messages VALUES('f03237e35b99ee90',0,0,0,'user','input','[{"type":"text","text":"question 0: explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. "}]');
INSERT INTO messages VALUES('f03237e35b99ee90',1,0,0,'assistant','output','[{"type":"text","text":"answer 1: the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. "}]');
INSERT INTO messages VALUES('41a7b3c01c5efe50',2,0,0,'user','input','[{"type":"text","text":"question 1: explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. "}]');
INSERT INTO messages VALUES('41a7b3c01c5efe50',3,0,0,'assistant','output','[{"type":"text","text":"answer 2: the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. "}]');
INSERT INTO messages VALUES('84192254cdf9d47f',4,0,0,'user','input','[{"type":"text","text":"question 2: explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. "}]');
INSERT INTO messages VALUES('84192254cdf9d47f',5,0,0,'assistant','output','[{"type":"text","text":"answer 3: the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. "}]');
INSERT INTO messages VALUES('ed0913ba5c3167d1',6,0,0,'user','input','[{"type":"text","text":"question 3: explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. explain the build in detail, step by step. "}]');
INSERT INTO messages VALUES('ed0913ba5c3167d1',7,0,0,'assistant','output','[{"type":"text","text":"answer 4: the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. the build runs go vet, then the tests, then packages the binary. "}]');
CREATE TABLE leases (
	session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
	owner       TEXT NOT NULL,
	acquired_at INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
);
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE INDEX loops_session ON loops(session_id, created_at);
CREATE INDEX messages_turn ON messages(loop_id, turn_index);
COMMIT;
PRAGMA user_version = 3;
