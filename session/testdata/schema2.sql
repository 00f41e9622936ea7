-- A session database at schema version 2, written by the v2 SQLite store and Recorder (sqlite3 .dump)
-- before a loop per user prompt: session 5e552022aaaa0001 = mainScript's four prompts recorded in ONE
-- loop main0000loop0001 (turns 0-5), branched after turn 4 into branch00loop0002 (history copied, its
-- prompt recorded as turn 5); session 5e552022bbbb0002 = mainScript cut after the second of three tool
-- results in loop crash000loop0003; session 5e552022cccc0003 = a parent loop parent00loop0004 whose
-- tool call ran the sub-agent loop child000loop0005. .dump omits user_version, so it is set here.
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
INSERT INTO sessions VALUES('5e552022aaaa0001',1795667651456,1795671326000,'what is here?','/work/a','','fake','m','flat');
INSERT INTO sessions VALUES('5e552022bbbb0002',1795667651506,1795671264000,'what is here?','/work/b','','','','');
INSERT INTO sessions VALUES('5e552022cccc0003',1795667651529,1795671281000,'delegate','/work/c','','','','');
CREATE TABLE loops (
	id                 TEXT PRIMARY KEY,
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	parent_loop_id     TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_loop TEXT REFERENCES loops(id) ON DELETE SET NULL,
	branched_from_turn INTEGER,
	trigger            TEXT NOT NULL,
	created_at         INTEGER NOT NULL
);
INSERT INTO loops VALUES('main0000loop0001','5e552022aaaa0001',NULL,NULL,NULL,'user',1795671253000);
INSERT INTO loops VALUES('branch00loop0002','5e552022aaaa0001',NULL,'main0000loop0001',4,'branch',1795667651497);
INSERT INTO loops VALUES('crash000loop0003','5e552022bbbb0002',NULL,NULL,NULL,'user',1795671253000);
INSERT INTO loops VALUES('parent00loop0004','5e552022cccc0003',NULL,NULL,NULL,'user',1795671253000);
INSERT INTO loops VALUES('child000loop0005','5e552022cccc0003','parent00loop0004',NULL,NULL,'sub_agent',1795671273000);
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
INSERT INTO turns VALUES('main0000loop0001',0,'user','main0000loop0001-corr-1','completed','tool_use','',100,20,0,0,50,170,1795671253000,1795671267000);
INSERT INTO turns VALUES('main0000loop0001',1,'continuation','main0000loop0001-corr-1','completed','tool_use','',10,30,0,150,5,195,1795671268000,1795671276000);
INSERT INTO turns VALUES('main0000loop0001',2,'continuation','main0000loop0001-corr-1','completed','end_turn','',7,3,0,180,0,190,1795671277000,1795671283000);
INSERT INTO turns VALUES('main0000loop0001',3,'user','main0000loop0001-corr-2','failed','','fake: HTTP 529 overloaded_error',0,0,0,0,0,0,1795671286000,1795671293000);
INSERT INTO turns VALUES('main0000loop0001',4,'user','main0000loop0001-corr-3','completed','max_tokens','',1,4096,0,200,0,4297,1795671296000,1795671304000);
INSERT INTO turns VALUES('main0000loop0001',5,'user','main0000loop0001-corr-4','completed','end_turn','',2,2,0,210,0,214,1795671307000,1795671315000);
INSERT INTO turns VALUES('branch00loop0002',5,'branch','branch00loop0002-corr-1','completed','end_turn','',1,1,0,1,1,4,1795671318000,1795671326000);
INSERT INTO turns VALUES('crash000loop0003',0,'user','crash000loop0003-corr-1','in_progress','tool_use','',100,20,0,0,50,170,1795671253000,0);
INSERT INTO turns VALUES('parent00loop0004',0,'user','parent00loop0004-corr-1','completed','tool_use','',1,1,0,0,0,2,1795671253000,1795671263000);
INSERT INTO turns VALUES('child000loop0005',0,'sub_agent','child000loop0005-corr-1','completed','end_turn','',5,5,0,0,0,10,1795671273000,1795671281000);
INSERT INTO turns VALUES('parent00loop0004',1,'continuation','parent00loop0004-corr-1','completed','end_turn','',0,0,0,0,0,0,1795671264000,1795671270000);
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
INSERT INTO messages VALUES('branch00loop0002',8,1,5,'user','input','[{"type":"text","text":"other way"}]');
INSERT INTO messages VALUES('branch00loop0002',9,0,5,'assistant','output','[{"type":"text","text":"fine"}]');
INSERT INTO messages VALUES('crash000loop0003',0,0,0,'user','input','[{"type":"text","text":"what is here?\nsecond line"}]');
INSERT INTO messages VALUES('crash000loop0003',1,0,0,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"t0-0","name":"glob","input":{"arg":0}},{"type":"tool_use","id":"t0-1","name":"fs_read","input":{"arg":1}},{"type":"tool_use","id":"t0-2","name":"grep","input":{"arg":2}}]');
INSERT INTO messages VALUES('crash000loop0003',2,0,0,'user','tool_results','[{"type":"tool_result","id":"t0-0","content":[{"type":"text","text":"result of glob #0"}]},{"type":"tool_result","id":"t0-1","content":[{"type":"text","text":"result of fs_read #1"}]}]');
INSERT INTO messages VALUES('parent00loop0004',0,0,0,'user','input','[{"type":"text","text":"delegate"}]');
INSERT INTO messages VALUES('parent00loop0004',1,0,0,'assistant','output','[{"type":"text","text":"let me look <&>"},{"type":"tool_use","id":"p-0","name":"use_subagent","input":{"arg":0}}]');
INSERT INTO messages VALUES('child000loop0005',0,0,0,'user','input','[{"type":"text","text":"sub task"}]');
INSERT INTO messages VALUES('child000loop0005',1,0,0,'assistant','output','[{"type":"text","text":"sub done"}]');
INSERT INTO messages VALUES('parent00loop0004',2,0,0,'user','tool_results','[{"type":"tool_result","id":"p-0","content":[{"type":"text","text":"result of use_subagent #0"}]}]');
INSERT INTO messages VALUES('parent00loop0004',3,0,1,'assistant','output','[{"type":"text","text":"done"}]');
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
PRAGMA user_version = 2;
