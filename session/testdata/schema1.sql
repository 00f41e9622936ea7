-- A session database at schema version 1, written by the SQLite store before the Store interface
-- existed (sqlite3 .dump of: session 5e551011aaaa0001 = mainScript recorded in loop main0000loop0001,
-- branched after turn 4 into branch00loop0002; session 5e551011bbbb0002 = mainScript cut after the
-- second of three tool results in loop crash000loop0003). .dump omits user_version, so it is set here.
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
INSERT INTO sessions VALUES('5e551011aaaa0001',1795462347884,1795466011000,'what is here?','/work/a','','fake','m','flat');
INSERT INTO sessions VALUES('5e551011bbbb0002',1795462347902,1795465960000,'what is here?','/work/b','','','','');
CREATE TABLE loops (
	id                 TEXT PRIMARY KEY,
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	parent_loop_id     TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_loop TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_turn INTEGER,
	trigger            TEXT NOT NULL,
	created_at         INTEGER NOT NULL
);
INSERT INTO loops VALUES('main0000loop0001','5e551011aaaa0001',NULL,NULL,NULL,'user',1795465949000);
INSERT INTO loops VALUES('branch00loop0002','5e551011aaaa0001',NULL,'main0000loop0001',4,'branch',1795462347901);
INSERT INTO loops VALUES('crash000loop0003','5e551011bbbb0002',NULL,NULL,NULL,'user',1795465949000);
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
INSERT INTO turns VALUES('main0000loop0001',0,'user','main0000loop0001-corr-1','completed','tool_use','',100,20,0,0,50,170,1795465949000,1795465963000);
INSERT INTO turns VALUES('main0000loop0001',1,'continuation','main0000loop0001-corr-1','completed','tool_use','',10,30,0,150,5,195,1795465964000,1795465972000);
INSERT INTO turns VALUES('main0000loop0001',2,'continuation','main0000loop0001-corr-1','completed','end_turn','',7,3,0,180,0,190,1795465973000,1795465979000);
INSERT INTO turns VALUES('main0000loop0001',3,'user','main0000loop0001-corr-2','failed','','fake: HTTP 529 overloaded_error',0,0,0,0,0,0,1795465982000,1795465989000);
INSERT INTO turns VALUES('main0000loop0001',4,'user','main0000loop0001-corr-3','completed','max_tokens','',1,4096,0,200,0,4297,1795465992000,1795466000000);
INSERT INTO turns VALUES('main0000loop0001',5,'user','main0000loop0001-corr-4','completed','end_turn','',2,2,0,210,0,214,1795466003000,1795466011000);
INSERT INTO turns VALUES('crash000loop0003',0,'user','crash000loop0003-corr-1','in_progress','tool_use','',100,20,0,0,50,170,1795465949000,0);
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
INSERT INTO messages VALUES('main0000loop0001',6,0,3,'user','input','[{"type":"text","text":"and now?"}]');
INSERT INTO messages VALUES('main0000loop0001',6,1,4,'user','input','[{"type":"text","text":"try again"}]');
INSERT INTO messages VALUES('main0000loop0001',7,0,4,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t4-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t4-1","name":"grep","input":{"arg":1}}]');
INSERT INTO messages VALUES('main0000loop0001',8,0,4,'user','tool_results','[{"type":"tool_result","id":"t4-0","content":[{"type":"text","text":"tool call not executed: the model''s response was cut off at max_tokens"}],"is_error":true},{"type":"tool_result","id":"t4-1","content":[{"type":"text","text":"tool call not executed: the model''s response was cut off at max_tokens"}],"is_error":true}]');
INSERT INTO messages VALUES('main0000loop0001',8,1,5,'user','input','[{"type":"text","text":"finish"}]');
INSERT INTO messages VALUES('main0000loop0001',9,0,5,'assistant','output','[{"type":"text","text":"ok"}]');
INSERT INTO messages VALUES('branch00loop0002',0,0,0,'user','input','[{"type":"text","text":"what is here?\nsecond line"}]');
INSERT INTO messages VALUES('branch00loop0002',1,0,0,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t0-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t0-1","name":"fs_read","input":{"arg":1}},{"type":"tool_use","id":"t0-2","name":"grep","input":{"arg":2}}]');
INSERT INTO messages VALUES('branch00loop0002',2,0,0,'user','tool_results','[{"type":"tool_result","id":"t0-0","content":[{"type":"text","text":"result of glob #0"}]},{"type":"tool_result","id":"t0-1","content":[{"type":"text","text":"result of fs_read #1"}]},{"type":"tool_result","id":"t0-2","content":[{"type":"text","text":"result of grep #2"}],"is_error":true}]');
INSERT INTO messages VALUES('branch00loop0002',3,0,1,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t1-0","name":"fs_read","input":{"arg":0}}]');
INSERT INTO messages VALUES('branch00loop0002',4,0,1,'user','tool_results','[{"type":"tool_result","id":"t1-0","content":[{"type":"text","text":"result of fs_read #0"}]}]');
INSERT INTO messages VALUES('branch00loop0002',5,0,2,'assistant','output','[{"type":"text","text":"done"}]');
INSERT INTO messages VALUES('branch00loop0002',6,0,3,'user','input','[{"type":"text","text":"and now?"}]');
INSERT INTO messages VALUES('branch00loop0002',6,1,4,'user','input','[{"type":"text","text":"try again"}]');
INSERT INTO messages VALUES('branch00loop0002',7,0,4,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t4-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t4-1","name":"grep","input":{"arg":1}}]');
INSERT INTO messages VALUES('branch00loop0002',8,0,4,'user','tool_results','[{"type":"tool_result","id":"t4-0","content":[{"type":"text","text":"tool call not executed: the model''s response was cut off at max_tokens"}],"is_error":true},{"type":"tool_result","id":"t4-1","content":[{"type":"text","text":"tool call not executed: the model''s response was cut off at max_tokens"}],"is_error":true}]');
INSERT INTO messages VALUES('crash000loop0003',0,0,0,'user','input','[{"type":"text","text":"what is here?\nsecond line"}]');
INSERT INTO messages VALUES('crash000loop0003',1,0,0,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t0-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t0-1","name":"fs_read","input":{"arg":1}},{"type":"tool_use","id":"t0-2","name":"grep","input":{"arg":2}}]');
INSERT INTO messages VALUES('crash000loop0003',2,0,0,'user','tool_results','[{"type":"tool_result","id":"t0-0","content":[{"type":"text","text":"result of glob #0"}]},{"type":"tool_result","id":"t0-1","content":[{"type":"text","text":"result of fs_read #1"}]}]');
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE INDEX loops_session ON loops(session_id, created_at);
CREATE INDEX messages_turn ON messages(loop_id, turn_index);
COMMIT;
PRAGMA user_version = 1;
