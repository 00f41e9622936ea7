-- A session database at schema version 3, written by the v3 SQLite store and Recorder (sqlite3 .dump)
-- before keep-alive pings were stored: session 5e553033aaaa0001 = mainScript's four prompts, a loop
-- per prompt chained by previous_loop_id (main0000loop0001, then -p2, -p3, -p4), and a branch
-- branch00loop0005 of -p4 after its turn 0 (no turn yet); session 5e553033bbbb0002 = mainScript cut
-- after the second of three tool results in loop crash000loop0006. .dump omits user_version, so it
-- is set here.
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
INSERT INTO sessions VALUES('5e553033aaaa0001',1795677456390,1795681120000,'what is here?','/work/a','','anthropic','claude-sonnet-4-5','cachefit');
INSERT INTO sessions VALUES('5e553033bbbb0002',1795677456394,1795681069000,'what is here?','/work/b','','','','');
CREATE TABLE loops (
	id                 TEXT PRIMARY KEY,
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	parent_loop_id     TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_loop TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_turn INTEGER,
	trigger            TEXT NOT NULL,
	created_at         INTEGER NOT NULL
, previous_loop_id TEXT REFERENCES loops(id) ON DELETE SET NULL);
INSERT INTO loops VALUES('main0000loop0001','5e553033aaaa0001',NULL,NULL,NULL,'user',1795681058000,NULL);
INSERT INTO loops VALUES('main0000loop0001-p2','5e553033aaaa0001',NULL,NULL,NULL,'user',1795681091000,'main0000loop0001');
INSERT INTO loops VALUES('main0000loop0001-p3','5e553033aaaa0001',NULL,NULL,NULL,'user',1795681101000,'main0000loop0001-p2');
INSERT INTO loops VALUES('main0000loop0001-p4','5e553033aaaa0001',NULL,NULL,NULL,'user',1795681112000,'main0000loop0001-p3');
INSERT INTO loops VALUES('branch00loop0005','5e553033aaaa0001',NULL,'main0000loop0001-p4',0,'branch',1795677456434,'main0000loop0001-p4');
INSERT INTO loops VALUES('crash000loop0006','5e553033bbbb0002',NULL,NULL,NULL,'user',1795681058000,NULL);
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
INSERT INTO turns VALUES('main0000loop0001',0,'user','main0000loop0001-corr-1','completed','tool_use','',100,20,0,0,50,170,1795681058000,1795681072000);
INSERT INTO turns VALUES('main0000loop0001',1,'continuation','main0000loop0001-corr-1','completed','tool_use','',10,30,0,150,5,195,1795681073000,1795681081000);
INSERT INTO turns VALUES('main0000loop0001',2,'continuation','main0000loop0001-corr-1','completed','end_turn','',7,3,0,180,0,190,1795681082000,1795681088000);
INSERT INTO turns VALUES('main0000loop0001-p2',0,'user','main0000loop0001-p2-corr-2','failed','','fake: HTTP 529 overloaded_error',0,0,0,0,0,0,1795681091000,1795681098000);
INSERT INTO turns VALUES('main0000loop0001-p3',0,'user','main0000loop0001-p3-corr-3','completed','max_tokens','',1,4096,0,200,0,4297,1795681101000,1795681109000);
INSERT INTO turns VALUES('main0000loop0001-p4',0,'user','main0000loop0001-p4-corr-4','completed','end_turn','',2,2,0,210,0,214,1795681112000,1795681120000);
INSERT INTO turns VALUES('crash000loop0006',0,'user','crash000loop0006-corr-1','in_progress','tool_use','',100,20,0,0,50,170,1795681058000,0);
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
INSERT INTO messages VALUES('main0000loop0001',0,0,0,'user','input','[{"type":"text","text":"what is here?\nsecond line"}]');
INSERT INTO messages VALUES('main0000loop0001',1,0,0,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t0-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t0-1","name":"fs_read","input":{"arg":1}},{"type":"tool_use","id":"t0-2","name":"grep","input":{"arg":2}}]');
INSERT INTO messages VALUES('main0000loop0001',2,0,0,'user','tool_results','[{"type":"tool_result","id":"t0-0","content":[{"type":"text","text":"result of glob #0"}]},{"type":"tool_result","id":"t0-1","content":[{"type":"text","text":"result of fs_read #1"}]},{"type":"tool_result","id":"t0-2","content":[{"type":"text","text":"result of grep #2"}],"is_error":true}]');
INSERT INTO messages VALUES('main0000loop0001',3,0,1,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t1-0","name":"fs_read","input":{"arg":0}}]');
INSERT INTO messages VALUES('main0000loop0001',4,0,1,'user','tool_results','[{"type":"tool_result","id":"t1-0","content":[{"type":"text","text":"result of fs_read #0"}]}]');
INSERT INTO messages VALUES('main0000loop0001',5,0,2,'assistant','output','[{"type":"text","text":"done"}]');
INSERT INTO messages VALUES('main0000loop0001-p2',6,0,0,'user','input','[{"type":"text","text":"and now?"}]');
INSERT INTO messages VALUES('main0000loop0001-p3',6,1,0,'user','input','[{"type":"text","text":"try again"}]');
INSERT INTO messages VALUES('main0000loop0001-p3',7,0,0,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t4-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t4-1","name":"grep","input":{"arg":1}}]');
INSERT INTO messages VALUES('main0000loop0001-p3',8,0,0,'user','tool_results','[{"type":"tool_result","id":"t4-0","content":[{"type":"text","text":"tool call not executed: the model''s response was cut off at max_tokens"}],"is_error":true},{"type":"tool_result","id":"t4-1","content":[{"type":"text","text":"tool call not executed: the model''s response was cut off at max_tokens"}],"is_error":true}]');
INSERT INTO messages VALUES('main0000loop0001-p4',8,1,0,'user','input','[{"type":"text","text":"finish"}]');
INSERT INTO messages VALUES('main0000loop0001-p4',9,0,0,'assistant','output','[{"type":"text","text":"ok"}]');
INSERT INTO messages VALUES('crash000loop0006',0,0,0,'user','input','[{"type":"text","text":"what is here?\nsecond line"}]');
INSERT INTO messages VALUES('crash000loop0006',1,0,0,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t0-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t0-1","name":"fs_read","input":{"arg":1}},{"type":"tool_use","id":"t0-2","name":"grep","input":{"arg":2}}]');
INSERT INTO messages VALUES('crash000loop0006',2,0,0,'user','tool_results','[{"type":"tool_result","id":"t0-0","content":[{"type":"text","text":"result of glob #0"}]},{"type":"tool_result","id":"t0-1","content":[{"type":"text","text":"result of fs_read #1"}]}]');
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
