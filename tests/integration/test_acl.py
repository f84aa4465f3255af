"""ACL: users, rules, enforcement, ACL LOG, DRYRUN, AUTH with users and the ACL file.

Every test here encodes Redis 7.0's behaviour and passes against redis-server too
(LAVIK_TEST_TARGET=redis). Tests on the shared server delete the users they create.
"""


import pytest
import redis

from conftest import RespError

NOPERM_KEYS = "this user has no permissions to access one of the keys used as arguments"
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
P1_HASH = "f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a"


def noperm_cmd(name):
    return f"this user has no permissions to run the '{name}' command"


@pytest.fixture
def acl(server, r):
    """The shared server's default client; removes test users and the ACL log afterwards."""
    r.execute_command("ACL", "LOG", "RESET")
    yield r
    users = [u for u in r.execute_command("ACL", "USERS") if u != "default"]
    if users:
        r.execute_command("ACL", "DELUSER", *users)
    r.execute_command("ACL", "LOG", "RESET")


def login(server, user, password="pw"):
    return server.client(username=user, password=password)


def getuser(r, name):
    reply = r.execute_command("ACL", "GETUSER", name)
    if isinstance(reply, list):
        reply = dict(zip(reply[0::2], reply[1::2]))
    return reply


# --------------------------------------------------------------------------- SETUSER / GETUSER


def test_setuser_getuser_layout(acl):
    assert acl.execute_command("ACL", "SETUSER", "u1", "on", ">p1", "~foo*", "%R~r*", "%W~w*",
                               "&ch*", "+@read", "-get", "resetchannels", "&x") == "OK"
    u = getuser(acl, "u1")
    assert list(u["flags"]) == ["on"]
    assert u["passwords"] == [P1_HASH]
    # Several single-command rules come out in Redis's hash-table order: test one.
    assert u["commands"] == "-@all +@read -get"
    assert u["keys"] == "~foo* %R~r* %W~w*"
    assert u["channels"] == "&x"
    assert u["selectors"] == []
    assert acl.execute_command("ACL", "GETUSER", "nosuch") is None


def test_setuser_list_users_whoami(acl):
    acl.execute_command("ACL", "SETUSER", "bob", "on", "nopass", "allkeys", "+get")
    assert acl.execute_command("ACL", "USERS") == ["bob", "default"]
    assert acl.execute_command("ACL", "LIST") == [
        "user bob on nopass ~* resetchannels -@all +get",
        "user default on nopass ~* &* +@all",
    ]
    assert acl.execute_command("ACL", "WHOAMI") == "default"


@pytest.mark.parametrize("op,reason", [
    ("bogus", "Syntax error"),
    ("+nosuch", "Unknown command or category name in ACL"),
    ("+@nosuch", "Unknown command or category name in ACL"),
    ("+config|nosuch", "Unknown command or category name in ACL"),
    ("+get|", "Syntax error"),
    ("+client|id|x", "Allowing first-arg of a subcommand is not supported"),
    ("%X~x", "Syntax error"),
    ("~a b", "Syntax error"),
    ("<nope", "The password you are trying to remove from the user does not exist"),
    ("#abc", "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters"),
])
def test_setuser_errors(acl, op, reason):
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "SETUSER", "bad", op)
    assert str(e.value) == f"Error in ACL SETUSER modifier '{op}': {reason}"
    assert acl.execute_command("ACL", "GETUSER", "bad") is None


def test_setuser_pattern_after_star(acl):
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "SETUSER", "bad", "~*", "~foo")
    assert "Try 'resetkeys'" in str(e.value)
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "SETUSER", "bad", "&*", "&foo")
    assert "Try 'resetchannels'" in str(e.value)


def test_setuser_username_with_space(acl):
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "SETUSER", "a b")
    assert str(e.value) == "Usernames can't contain spaces or null characters"


def test_reset_and_flags(acl):
    acl.execute_command("ACL", "SETUSER", "y", "on", ">x", "~*", "&*", "+@all", "reset")
    u = getuser(acl, "y")
    assert list(u["flags"]) == ["off", "sanitize-payload"]
    assert u["commands"] == "-@all" and u["keys"] == "" and u["channels"] == ""
    acl.execute_command("ACL", "SETUSER", "z", "+config", "-config|set")
    assert getuser(acl, "z")["commands"] == "-@all +config -config|set"


# --------------------------------------------------------------------------- enforcement


def test_command_rules_enforced(server, acl):
    acl.execute_command("ACL", "SETUSER", "lim", "on", ">pw", "~*", "-@all", "+get",
                        "+config|get", "+acl|whoami")
    c = login(server, "lim")
    assert c.get("k") is None
    with pytest.raises(redis.exceptions.NoPermissionError) as e:
        c.set("k", "v")
    assert str(e.value) == noperm_cmd("set")
    with pytest.raises(redis.exceptions.NoPermissionError) as e:
        c.execute_command("CONFIG", "SET", "maxmemory", "1")
    assert str(e.value) == noperm_cmd("config|set")
    assert c.execute_command("CONFIG", "GET", "nosuchparam") == []
    assert c.execute_command("ACL", "WHOAMI") == "lim"
    c.close()


def test_category_rules_enforced(server, acl):
    acl.execute_command("ACL", "SETUSER", "rd", "on", ">pw", "~*", "+@all", "-@write")
    c = login(server, "rd")
    assert c.get("k") is None
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.set("k", "v")
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.delete("k")
    c.close()


def test_key_patterns_enforced(server, acl):
    acl.execute_command("ACL", "SETUSER", "kp", "on", ">pw", "+@all", "~k*", "%R~r*", "%W~w*")
    c = login(server, "kp")
    c.set("k1", "v")
    assert c.get("k1") == "v"
    assert c.get("r1") is None
    c.set("w1", "v")
    for call in (lambda: c.get("zz"), lambda: c.get("w1"), lambda: c.set("r1", "v"),
                 lambda: c.mget("k1", "zz")):
        with pytest.raises(redis.exceptions.NoPermissionError) as e:
            call()
        assert str(e.value) == NOPERM_KEYS
    c.close()


def test_store_commands_need_only_read_access_to_their_sources(server, acl):
    """Redis's key specs: the destination of SINTERSTORE/ZUNIONSTORE/... is written, the sources
    only read, so a read-only pattern covers the sources but not the destination."""
    acl.execute_command("ACL", "SETUSER", "st", "on", ">pw", "+@all", "~w*", "%R~r*")
    acl.sadd("r:s1", "a", "b")
    acl.sadd("r:s2", "b")
    acl.zadd("r:z1", {"a": 1, "b": 2})
    c = login(server, "st")
    assert c.sinterstore("w:i", "r:s1", "r:s2") == 1
    assert c.sunionstore("w:u", "r:s1", "r:s2") == 2
    assert c.sdiffstore("w:d", "r:s1", "r:s2") == 1
    assert c.zunionstore("w:zu", ["r:z1"]) == 2
    assert c.zinterstore("w:zi", ["r:z1", "w:zu"]) == 2
    assert c.zdiffstore("w:zd", ["r:z1"]) == 2
    assert c.zrangestore("w:zr", "r:z1", 0, 0) == 1
    assert c.copy("r:s1", "w:copy") is True
    for call in (lambda: c.sinterstore("r:x", "r:s1"), lambda: c.zunionstore("r:x", ["r:z1"]),
                 lambda: c.zrangestore("r:x", "r:z1", 0, -1), lambda: c.copy("w:i", "r:x"),
                 lambda: c.sunionstore("w:x", "r:s1", "other")):
        with pytest.raises(redis.exceptions.NoPermissionError) as e:
            call()
        assert str(e.value) == NOPERM_KEYS
    c.close()


def test_first_arg_rule(server, acl):
    acl.execute_command("ACL", "SETUSER", "fa", "on", ">pw", "~*", "-@all", "+select|0")
    assert getuser(acl, "fa")["commands"] == "-@all +select|0"
    c = login(server, "fa")
    assert c.execute_command("SELECT", "0")
    with pytest.raises(redis.exceptions.NoPermissionError) as e:
        c.execute_command("SELECT", "1")
    assert str(e.value) == noperm_cmd("select")
    c.close()


def test_password_and_flag_changes_keep_sessions(server, acl, raw):
    # Only DELUSER (and ACL LOAD) close a user's clients; off/resetpass/reset do not.
    acl.execute_command("ACL", "SETUSER", "st", "on", ">pw", "~*", "+@all")
    c = raw()
    assert c.cmd("AUTH", "st", "pw") == "OK"
    acl.execute_command("ACL", "SETUSER", "st", "off", "resetpass", ">other")
    assert c.cmd("GET", "k") is None
    acl.execute_command("ACL", "SETUSER", "st", "reset")
    assert c.cmd("GET", "k") == RespError("NOPERM " + noperm_cmd("get"))
    assert c.cmd("ACL", "WHOAMI") == RespError("NOPERM " + noperm_cmd("acl|whoami"))


def test_changes_apply_to_logged_in_clients(server, acl):
    acl.execute_command("ACL", "SETUSER", "ch", "on", ">pw", "~*", "+get")
    c = login(server, "ch")
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.set("k", "v")
    acl.execute_command("ACL", "SETUSER", "ch", "+set")
    assert c.set("k", "v")
    c.close()


# --------------------------------------------------------------------------- AUTH


def test_auth_with_users(server, acl, raw):
    acl.execute_command("ACL", "SETUSER", "al", "on", ">pw", "~*", "+@all")
    acl.execute_command("ACL", "SETUSER", "offu", "off", ">pw", "~*", "+@all")
    c = raw()
    assert c.cmd("AUTH", "al", "pw") == "OK"
    assert c.cmd("ACL", "WHOAMI") == b"al"
    assert "user=al" in c.cmd("CLIENT", "INFO").decode()
    assert c.cmd("AUTH", "al", "bad") == RespError(WRONGPASS)
    assert c.cmd("AUTH", "offu", "pw") == RespError(WRONGPASS)
    assert c.cmd("AUTH", "nobody", "pw") == RespError(WRONGPASS)
    assert c.cmd("ACL", "WHOAMI") == b"al"  # a failed AUTH keeps the current user
    h = c.cmd("HELLO", "2", "AUTH", "default", "x")
    assert isinstance(h, list)
    assert c.cmd("ACL", "WHOAMI") == b"default"


def test_deluser_default_refused(acl):
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "DELUSER", "default")
    assert str(e.value) == "The 'default' user cannot be removed"
    assert acl.execute_command("ACL", "DELUSER", "nosuch") == 0


def test_deluser_closes_open_connection(server, acl, raw):
    acl.execute_command("ACL", "SETUSER", "gone2", "on", ">pw", "~*", "+@all")
    c = raw()
    assert c.cmd("AUTH", "gone2", "pw") == "OK"
    assert acl.execute_command("ACL", "DELUSER", "gone2") == 1
    assert c.closed()


# --------------------------------------------------------------------------- LOG


NOPERM_CHANNELS = "NOPERM this user has no permissions to access one of the channels used as arguments"


def test_channel_patterns_enforced(server, acl, raw):
    acl.execute_command("ACL", "SETUSER", "chu", "on", ">pw", "+@all", "~*", "resetchannels",
                        "&news.*")
    c = raw()
    assert c.cmd("AUTH", "chu", "pw") == "OK"
    assert c.cmd("PUBLISH", "news.1", "x") == 0
    assert c.cmd("PUBLISH", "other", "x") == RespError(NOPERM_CHANNELS)
    assert c.cmd("SPUBLISH", "other", "x") == RespError(NOPERM_CHANNELS)
    # A pattern must equal one of the user's patterns literally.
    assert c.cmd("PSUBSCRIBE", "news.a*") == RespError(NOPERM_CHANNELS)
    # One refused channel refuses the whole command: nothing is subscribed.
    assert c.cmd("SUBSCRIBE", "news.a", "other") == RespError(NOPERM_CHANNELS)
    assert c.cmd("PUBSUB", "NUMSUB", "news.a") == [b"news.a", 0]
    assert c.cmd("SUBSCRIBE", "news.a") == [b"subscribe", b"news.a", 1]
    assert c.cmd("PSUBSCRIBE", "news.*") == [b"psubscribe", b"news.*", 2]
    entries = [dict(zip(e[0::2], e[1::2])) if isinstance(e, list) else e
               for e in acl.execute_command("ACL", "LOG")]
    assert ("channel", "other") in [(e["reason"], e["object"]) for e in entries]
    assert ("channel", "news.a*") in [(e["reason"], e["object"]) for e in entries]
    d = acl.execute_command("ACL", "DRYRUN", "chu", "PUBLISH", "other", "x")
    assert "no permissions to access the 'other' channel" in d
    assert acl.execute_command("ACL", "DRYRUN", "chu", "PUBLISH", "news.2", "x") == "OK"


def test_acl_log_entries(server, acl):
    acl.execute_command("ACL", "SETUSER", "lg", "on", ">pw", "~k*", "-@all", "+get")
    c = login(server, "lg")
    for _ in range(2):
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.get("zz")
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.set("k1", "v")
    with pytest.raises(redis.ResponseError):
        redis.Redis(host=server.host, port=server.port, username="lg", password="bad").ping()
    log = acl.execute_command("ACL", "LOG")
    entries = [dict(zip(e[0::2], e[1::2])) if isinstance(e, list) else e for e in log]
    assert [(e["reason"], e["object"], e["username"], e["count"]) for e in entries] == [
        ("auth", "AUTH", "lg", 1),
        ("command", "set", "lg", 1),
        ("key", "zz", "lg", 2),
    ]
    for e in entries:
        assert e["context"] == "toplevel"
        assert float(e["age-seconds"]) < 30
        assert e["client-info"].startswith("id=")
    assert "cmd=get user=lg" in entries[2]["client-info"]
    assert len(acl.execute_command("ACL", "LOG", "1")) == 1
    assert acl.execute_command("ACL", "LOG", "-1") == []
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "LOG", "x")
    assert str(e.value) == "value is not an integer or out of range"
    assert acl.execute_command("ACL", "LOG", "RESET") == "OK"
    assert acl.execute_command("ACL", "LOG") == []
    c.close()


# --------------------------------------------------------------------------- DRYRUN / CAT / GENPASS


def test_dryrun(acl):
    acl.execute_command("ACL", "SETUSER", "dr", "on", "+@all", "~k*", "%R~r*", "-config|set")
    assert acl.execute_command("ACL", "DRYRUN", "dr", "get", "k1") == "OK"
    assert acl.execute_command("ACL", "DRYRUN", "dr", "get", "zz") == (
        "This user has no permissions to access the 'zz' key")
    assert acl.execute_command("ACL", "DRYRUN", "dr", "set", "r1", "v") == (
        "This user has no permissions to access the 'r1' key")
    assert acl.execute_command("ACL", "DRYRUN", "dr", "config", "set", "a", "b") == (
        "This user has no permissions to run the 'config|set' command")
    for args, text in [(("nouser", "get", "x"), "User 'nouser' not found"),
                       (("dr", "nosuch"), "Command 'nosuch' not found"),
                       (("dr", "get"), "wrong number of arguments for 'get' command")]:
        with pytest.raises(redis.ResponseError) as e:
            acl.execute_command("ACL", "DRYRUN", *args)
        assert str(e.value) == text


def test_cat(acl):
    cats = acl.execute_command("ACL", "CAT")
    assert cats[:3] == ["keyspace", "read", "write"] and len(cats) == 21
    strings = acl.execute_command("ACL", "CAT", "string")
    assert "get" in strings and "set" in strings and "del" not in strings
    assert "config|set" in acl.execute_command("ACL", "CAT", "dangerous")
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "CAT", "nosuch")
    assert str(e.value) == "Unknown category 'nosuch'"


def test_genpass(acl):
    p = acl.execute_command("ACL", "GENPASS")
    assert len(p) == 64 and all(ch in "0123456789abcdef" for ch in p)
    assert len(acl.execute_command("ACL", "GENPASS", "5")) == 2
    with pytest.raises(redis.ResponseError) as e:
        acl.execute_command("ACL", "GENPASS", "0")
    assert "a positive number up to 4096" in str(e.value)


def test_load_save_without_aclfile(acl):
    for sub in ("LOAD", "SAVE"):
        with pytest.raises(redis.ResponseError) as e:
            acl.execute_command("ACL", sub)
        assert str(e.value).startswith("This Redis instance is not configured to use an ACL file.")


# --------------------------------------------------------------------------- requirepass


def test_requirepass_sets_default_user_password(spawn_server):
    s = spawn_server()
    r = s.client()
    existing = s.raw()
    assert existing.cmd("PING") == "PONG"
    r.config_set("requirepass", "secret")
    # Connected before the password was set: still authenticated, as in Redis.
    assert existing.cmd("PING") == "PONG"
    line = r.execute_command("ACL", "LIST")[0]
    assert line.startswith("user default on #") and "nopass" not in line
    fresh = s.raw()
    assert fresh.cmd("GET", "k") == RespError("NOAUTH Authentication required.")
    assert fresh.cmd("AUTH", "secret") == "OK"
    r.config_set("requirepass", "")
    assert r.execute_command("ACL", "LIST")[0] == "user default on nopass ~* &* +@all"


# --------------------------------------------------------------------------- ACL file


def test_aclfile_load_save_restart(spawn_server, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user alice on >pw ~a* +get\n")
    s = spawn_server(extra_args=["--aclfile", str(path)])
    r = s.client()
    assert r.execute_command("ACL", "USERS") == ["alice", "default"]
    a = s.client(username="alice", password="pw")
    assert a.get("a1") is None
    r.execute_command("ACL", "SETUSER", "bob", "on", ">pw2", "~*", "+@all")
    assert r.execute_command("ACL", "SAVE") == "OK"
    saved = path.read_text().splitlines()
    assert "user bob on #" in saved[1] and saved[2] == "user default on nopass ~* &* +@all"
    # LOAD is all or nothing.
    path.write_text("user carol on\nnot a user line\n")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("ACL", "LOAD")
    assert str(e.value) == (f"{path}:2 should start with user keyword followed by the "
                            "username. WARNING: ACL errors detected, no change to the previously "
                            "active ACL rules was performed")
    assert r.execute_command("ACL", "USERS") == ["alice", "bob", "default"]
    path.write_text("\n".join(saved) + "\n")
    s.terminate()
    s2 = spawn_server(extra_args=["--aclfile", str(path)])
    assert s2.client().execute_command("ACL", "USERS") == ["alice", "bob", "default"]
    assert s2.client(username="bob", password="pw2").ping()


def test_aclfile_load_replaces_users(spawn_server, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user default on nopass ~* &* +@all\n")
    s = spawn_server(extra_args=["--aclfile", str(path)])
    r = s.client()
    r.execute_command("ACL", "SETUSER", "tmp", "on")
    r.execute_command("ACL", "SETUSER", "ed", "on", "nopass", "+@all", "~*")
    ed = s.raw()
    assert ed.cmd("AUTH", "ed", "x") == "OK"
    default = s.raw()
    assert default.cmd("PING") == "PONG"
    path.write_text("user default on nopass ~* &* +@all\nuser ed on nopass +@all ~*\n")
    assert r.execute_command("ACL", "LOAD") == "OK"
    assert r.execute_command("ACL", "USERS") == ["default", "ed"]
    # As Redis 7.0, ACL LOAD closes the clients of every user but "default", even kept ones.
    assert ed.closed()
    assert default.cmd("PING") == "PONG"


def test_aclfile_bad_file_aborts_startup(spawn_server, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user alice on bogus\n")
    with pytest.raises(RuntimeError) as e:
        spawn_server(extra_args=["--aclfile", str(path)])
    assert "exited with code 1" in str(e.value)


def test_acllog_max_len_bounds_the_log(acl, server):
    """acllog-max-len: at most that many entries are kept, as the next one is added."""
    try:
        assert acl.config_set("acllog-max-len", 2) is True
        for name in ("la", "lb", "lc", "ld"):  # failed AUTHs of four users: four entries
            with pytest.raises(redis.ResponseError):
                redis.Redis(host=server.host, port=server.port, username=name,
                            password="bad").ping()
        log = acl.execute_command("ACL", "LOG")
        entries = [dict(zip(e[0::2], e[1::2])) if isinstance(e, list) else e for e in log]
        assert [e["username"] for e in entries] == ["ld", "lc"]
    finally:
        acl.config_set("acllog-max-len", 128)


def test_acl_pubsub_default_sets_new_users_channels(acl):
    """acl-pubsub-default (resetchannels in 7.0): the channels a new user, or one reset, gets."""
    try:
        assert acl.config_set("acl-pubsub-default", "allchannels") is True
        assert acl.execute_command("ACL", "SETUSER", "pa", "on") == "OK"
        assert getuser(acl, "pa")["channels"] == "&*"
        assert acl.execute_command("ACL", "SETUSER", "pa", "resetchannels") == "OK"
        assert getuser(acl, "pa")["channels"] == ""
        assert acl.execute_command("ACL", "SETUSER", "pa", "reset") == "OK"
        assert getuser(acl, "pa")["channels"] == "&*"
        assert acl.config_set("acl-pubsub-default", "resetchannels") is True
        assert acl.execute_command("ACL", "SETUSER", "pb", "on") == "OK"
        assert getuser(acl, "pb")["channels"] == ""
        assert getuser(acl, "pa")["channels"] == "&*"  # existing users keep theirs
    finally:
        acl.config_set("acl-pubsub-default", "resetchannels")
