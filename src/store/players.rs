//! The player collections' games ([`crate::repertoire::collection`]) in the store:
//! `player_names` (each listed player's spellings, as JSON) and `player_games` (one row
//! per listed player and game, in collection order; `moves` the first plies as 16-bit
//! little-endian [`MoveKey`]s). A store of an older schema has neither table and reads
//! as having no player collection.

use rusqlite::types::ToSqlOutput;
use rusqlite::{Connection, params, params_from_iter};

use super::schema::{GAME_COLUMNS, game_insert, game_select};
use super::{StoreError, sql};
use crate::position::MoveKey;
use crate::repertoire::Side;
use crate::repertoire::collection::{CollectionGame, Collections, Listed};

/// Writes `collections` on `conn`.
pub fn write(
    conn: &mut Connection,
    path: &str,
    collections: &Collections,
) -> Result<(), StoreError> {
    let tx = conn.transaction().map_err(sql(path))?;
    {
        let mut insert =
            tx.prepare("INSERT INTO player_names VALUES (?1, ?2)").map_err(sql(path))?;
        for p in &collections.players {
            insert
                .execute(params![
                    p.name,
                    serde_json::to_string(&p.spellings).expect("names serialize")
                ])
                .map_err(sql(path))?;
        }
        let mut insert = tx.prepare(&game_insert("player_games", 3, 1)).map_err(sql(path))?;
        for (i, c) in collections.games.iter().enumerate() {
            let moves: Vec<u8> = c.moves.iter().flat_map(|m| m.0.to_le_bytes()).collect();
            let own = [(i as i64).into(), c.player.as_str().into(), c.side.word().into()];
            let values: [ToSqlOutput<'_>; 3] = own;
            let values = values
                .into_iter()
                .chain(super::explorer::reference_values(&c.game))
                .chain([ToSqlOutput::from(moves.as_slice())]);
            insert.execute(params_from_iter(values)).map_err(sql(path))?;
        }
    }
    tx.commit().map_err(sql(path))
}

/// Reads the player collections, `None` when the store has none.
pub fn load(conn: &Connection, path: &str) -> Result<Option<Collections>, StoreError> {
    if !super::has_table(conn, path, "player_games")? {
        return Ok(None);
    }
    let corrupt = |what: String| StoreError::Corrupt(format!("{path}: {what}"));
    let mut out = Collections::default();
    let mut stmt = conn
        .prepare("SELECT name, spellings FROM player_names ORDER BY name")
        .map_err(sql(path))?;
    let names = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(sql(path))?;
    for row in names {
        let (name, spellings) = row.map_err(sql(path))?;
        let spellings = serde_json::from_str(&spellings)
            .map_err(|e| corrupt(format!("player_names {name}: {e}")))?;
        out.players.push(Listed { name, spellings });
    }
    let mut stmt = conn
        .prepare(&game_select(&["player", "color"], &["moves"], "player_games ORDER BY row"))
        .map_err(sql(path))?;
    let rows = stmt
        .query_map([], |r| {
            let game = super::explorer::reference(r, 2)?;
            let moves: Vec<u8> = r.get(2 + GAME_COLUMNS.len())?;
            let side = if r.get::<_, String>(1)? == "white" { Side::White } else { Side::Black };
            let moves =
                moves.chunks_exact(2).map(|b| MoveKey(u16::from_le_bytes([b[0], b[1]]))).collect();
            Ok(CollectionGame { player: r.get(0)?, side, game, moves })
        })
        .map_err(sql(path))?;
    out.games = rows.collect::<Result<_, _>>().map_err(sql(path))?;
    Ok(Some(out))
}
